-- mart_scoreboard: in every column group, a value or the reason it has none (never both, never neither), and the
-- value inside its interval. Returns the offending (predictor, comparison) pairs.
{%- set comparisons = scoreboard_wide_comparisons() %}
{% for c in comparisons %}
select predictor, '{{ c }}' as comparison
from {{ ref('mart_scoreboard') }}
where ({{ c }} is null) = ({{ c }}_null_reason is null)
   or {{ c }} < {{ c }}_ci_low or {{ c }} > {{ c }}_ci_high
{{ "union all" if not loop.last }}
{% endfor %}
