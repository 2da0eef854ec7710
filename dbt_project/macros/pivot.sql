{#- One column per key of a long table: `agg(case when key_column = 'key' [and condition] then value end) as
    alias`, for each key: alias of `columns` (a mapping, in order). A pivot written out line by line was
    repeated across the wild models. -#}
{% macro pivot_columns(agg, key_column, value, columns, condition=none) -%}
{%- for key, alias in columns.items() %}
        {{ agg }}(case when {{ key_column }} = '{{ key }}'{% if condition %} and {{ condition }}{% endif %} then {{ value }} end) as {{ alias }}{{ "," if not loop.last }}
{%- endfor %}
{%- endmacro %}
