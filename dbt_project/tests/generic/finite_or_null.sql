{#- Every floating-point column of `model` (DOUBLE, FLOAT, REAL) holds a finite number or NULL: never NaN, never
    +/-inf. dbt's not_null passes NaN (NaN is not NULL), so a metric gone NaN (ln of a negative, 0/0) would
    pass every other test. Given at model level, to every mart (tests/test_dbt_conventions.py checks that):
        data_tests:
          - finite_or_null
          - finite_or_null: {arguments: {allow: {column: "why it may be NaN or infinite"}}}
    `allow` names the columns that may hold a non-finite value, each with its reason; the rows returned are
    the failing ones, with the failing column's name (`nonfinite_column`). -#}
{% test finite_or_null(model, allow={}) %}
{%- if relation_is_missing(model) -%}
{{ missing_relation_passes() }}
{%- else -%}
{%- set floats = [] -%}
{%- if execute -%}
  {%- for col in adapter.get_columns_in_relation(model) -%}
    {%- if col.dtype | upper in ('DOUBLE', 'FLOAT', 'REAL', 'FLOAT4', 'FLOAT8') and col.name not in allow -%}
      {%- do floats.append(col.name) -%}
    {%- endif -%}
  {%- endfor -%}
{%- endif -%}
{%- if floats | length == 0 -%}
select null as nonfinite_column where false
{%- else -%}
{%- for name in floats %}
{% if not loop.first %}union all
{% endif -%}
select '{{ name }}' as nonfinite_column, cast({{ adapter.quote(name) }} as varchar) as value
from {{ model }}
where isnan({{ adapter.quote(name) }}) or isinf({{ adapter.quote(name) }})
{%- endfor %}
{%- endif %}
{%- endif %}
{% endtest %}
