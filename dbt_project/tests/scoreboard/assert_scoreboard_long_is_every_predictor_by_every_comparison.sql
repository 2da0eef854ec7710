-- mart_scoreboard_long holds every (predictor, comparison) pair: predictors x comparisons rows (a comparison a
-- predictor cannot have is a row with its reason, never a missing row). Returns a row when the count differs.
select n_rows, n_predictors, n_comparisons
from (select count(*) as n_rows, count(distinct predictor) as n_predictors, count(distinct comparison) as n_comparisons
      from {{ ref('mart_scoreboard_long') }})
where n_rows <> n_predictors * n_comparisons
