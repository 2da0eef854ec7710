{#- Tests on sources (models/staging/**/_*__sources.yml) must pass when the source does not exist yet:
    a raw table that no ingest job has written, or an external Parquet/JSON source with no file (the
    staging views then yield empty typed relations, macros/staging.sql; `dbt build` over an empty warehouse
    must pass). The generic tests used on sources (not_null, unique: tests/generic/builtin_overrides.sql;
    unique_combination_of_columns) ask `relation_is_missing` first and then test nothing. A model a test
    runs on always exists (dbt builds it first), so for models this changes nothing. -#}

{#- whether `model` (a test's relation) names a table that does not exist or an external source whose
    file glob matches no file; false while parsing and for a `where`-filtered subquery (a string) -#}
{% macro relation_is_missing(model) -%}
  {%- if not execute or model is string -%}
    {{- return(false) -}}
  {%- endif -%}
  {%- if model.external -%}
    {%- set found = modules.re.search("'([^']+)'", model.external) -%}
    {{- return(found is not none and count_files(found.group(1)) == 0) -}}
  {%- endif -%}
  {%- if model.identifier is none -%}
    {{- return(false) -}}
  {%- endif -%}
  {{- return(adapter.get_relation(database=model.database, schema=model.schema, identifier=model.identifier) is none) -}}
{%- endmacro %}

{#- the query of a test on a relation that does not exist: no failing rows -#}
{% macro missing_relation_passes() -%}
select null as nothing where false
{%- endmacro %}
