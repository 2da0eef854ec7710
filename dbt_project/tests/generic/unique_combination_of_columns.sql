{#- Fails on every combination of `combination_of_columns` that occurs more than once (dbt_utils'
    unique_combination_of_columns, same name and argument; a missing source table passes, see
    macros/source_tests.sql). -#}
{% test unique_combination_of_columns(model, combination_of_columns) %}
{%- if relation_is_missing(model) -%}
{{ missing_relation_passes() }}
{%- else -%}
select {{ combination_of_columns | join(', ') }}, count(*) as n_rows
from {{ model }}
group by {{ combination_of_columns | join(', ') }}
having count(*) > 1
{%- endif %}
{% endtest %}
