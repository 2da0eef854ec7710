{#- dbt's built-in not_null and unique, unchanged except that a source that does not exist yet passes
    (macros/source_tests.sql); dbt uses a project's test of a built-in name instead of its own. -#}

{% test not_null(model, column_name) %}
{%- if relation_is_missing(model) -%}
{{ missing_relation_passes() }}
{%- else -%}
{{ adapter.dispatch('test_not_null', 'dbt')(model, column_name) }}
{%- endif %}
{% endtest %}

{% test unique(model, column_name) %}
{%- if relation_is_missing(model) -%}
{{ missing_relation_passes() }}
{%- else -%}
{{ adapter.dispatch('test_unique', 'dbt')(model, column_name) }}
{%- endif %}
{% endtest %}
