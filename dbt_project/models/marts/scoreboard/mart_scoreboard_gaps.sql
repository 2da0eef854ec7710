-- Humans vs the best model, per comparison where humans have a value (mart_scoreboard_long): the humans' value,
-- the best model's (highest or lowest as the comparison's direction says; any model, scored, imported or
-- reported), and the gap with an approximate 95% interval.
--
-- The gap: for shares (top-1 accuracy) the difference humans - model; for perplexity the ratio humans / model
-- (perplexity is multiplicative: the ratio is exp of the difference in mean loss, nats). Its interval is a normal
-- approximation that treats the two estimates as independent: each side's standard error is read back from its
-- interval (half-width / z, z = 1.96 for a 95% interval, 2 for Shlegeris et al.'s (2024) +-2 sigma; on the log scale
-- for perplexity), combined as sqrt(se_h^2 + se_m^2), times 1.96. Humans and models answer the same questions, so the
-- estimates are positively correlated and the interval is conservative (too wide). A value reported without an interval
-- counts with se 0: the gap's interval is then the humans' alone (gap_interval_note says so).
with long as (
    select * from {{ ref('mart_scoreboard_long') }}
),

humans as (
    select * from long where predictor = 'humans' and value is not null
),

ranked_models as (
    select l.*,
           row_number() over (partition by l.comparison
                              order by case when l.higher_is_better then -l.value else l.value end, l.predictor)
               as rank,
           count(*) over (partition by l.comparison) as n_models_compared
    from long as l
    where l.predictor <> 'humans' and l.value is not null
),

best as (
    select * from ranked_models where rank = 1
),

paired as (
    select h.comparison, h.comparison_label, h.comparison_family, h.unit, h.higher_is_better, h.page, h.sort_order,
           h.value as humans_value, h.ci_low as humans_ci_low, h.ci_high as humans_ci_high, h.n as humans_n,
           b.predictor as best_predictor, b.display_name as best_display_name, b.value as best_value,
           b.ci_low as best_ci_low, b.ci_high as best_ci_high, b.n as best_n, b.value_origin as best_value_origin,
           b.n_models_compared,
           h.comparison_family = 'pairwise_perplexity' as is_ratio,
           case when h.interval_method like '±2%' then 2.0 else 1.96 end as z_humans,
           case when b.interval_method like '±2%' then 2.0 else 1.96 end as z_best
    from humans as h
    inner join best as b using (comparison)
),

with_se as (
    select *,
           case when is_ratio then (ln(humans_ci_high) - ln(humans_ci_low)) / (2 * z_humans)
                else (humans_ci_high - humans_ci_low) / (2 * z_humans) end as se_humans,
           coalesce(case when is_ratio then (ln(best_ci_high) - ln(best_ci_low)) / (2 * z_best)
                         else (best_ci_high - best_ci_low) / (2 * z_best) end, 0) as se_best,
           case when is_ratio then ln(humans_value) - ln(best_value) else humans_value - best_value end as gap_linear
    from paired
)

select comparison, comparison_label, comparison_family, unit, higher_is_better,
       humans_value, humans_ci_low, humans_ci_high, humans_n,
       best_predictor, best_display_name, best_value, best_ci_low, best_ci_high, best_n, best_value_origin,
       n_models_compared,
       case when is_ratio then 'ratio humans / model' else 'difference humans - model' end as gap_kind,
       case when is_ratio then exp(gap_linear) else gap_linear end as gap,
       case when is_ratio then exp(gap_linear - 1.96 * sqrt(se_humans ^ 2 + se_best ^ 2))
            else gap_linear - 1.96 * sqrt(se_humans ^ 2 + se_best ^ 2) end as gap_ci_low,
       case when is_ratio then exp(gap_linear + 1.96 * sqrt(se_humans ^ 2 + se_best ^ 2))
            else gap_linear + 1.96 * sqrt(se_humans ^ 2 + se_best ^ 2) end as gap_ci_high,
       case when best_ci_low is null then 'the model''s value is reported without an interval: the humans'' alone'
            else 'normal approximation, the two estimates taken as independent (conservative)' end as gap_interval_note,
       case when higher_is_better then humans_value > best_value else humans_value < best_value end
           as humans_better,
       page, sort_order
from with_se
