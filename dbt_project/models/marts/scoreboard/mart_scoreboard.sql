-- The scoreboard, wide: one row per predictor (as mart_scoreboard_long) and one column group per comparison of
-- the shipped corpora (macro scoreboard_wide_comparisons): <comparison> (the value, its unit in the name or in
-- mart_scoreboard_long.unit), <comparison>_ci_low / _ci_high (its interval: mart_scoreboard_long.interval_method),
-- <comparison>_n (what it is counted over: mart_scoreboard_long.n_unit) and <comparison>_null_reason (why the value
-- is NULL; NULL when it is not). A pivot of mart_scoreboard_long: no value is computed here.
{%- set comparisons = scoreboard_wide_comparisons() %}
with long as (
    select * from {{ ref('mart_scoreboard_long') }}
),

predictors as (
    select predictor, any_value(display_name) as display_name, any_value(predictor_kind) as predictor_kind,
           any_value(predictor_family) as predictor_family, any_value(n_parameters) as n_parameters,
           any_value(predictor_origins) as predictor_origins, count(value) as n_comparisons_with_value
    from long
    group by predictor
)

select
    p.predictor, p.display_name, p.predictor_kind, p.predictor_family, p.n_parameters, p.predictor_origins,
    p.n_comparisons_with_value,
{%- for c in comparisons %}
    max(l.value) filter (where l.comparison = '{{ c }}') as {{ c }},
    max(l.ci_low) filter (where l.comparison = '{{ c }}') as {{ c }}_ci_low,
    max(l.ci_high) filter (where l.comparison = '{{ c }}') as {{ c }}_ci_high,
    max(l.n) filter (where l.comparison = '{{ c }}') as {{ c }}_n,
    coalesce(max(l.null_reason) filter (where l.comparison = '{{ c }}'),
             case when count(*) filter (where l.comparison = '{{ c }}') = 0
                  then 'This warehouse holds no data for this comparison (its source is not ingested).' end)
        as {{ c }}_null_reason{{ "," if not loop.last }}
{%- endfor %}
from predictors as p
left join long as l using (predictor)
group by all
