{#- Staging helpers that keep the project buildable when an input does not exist yet
    (a raw table that no ingest job has written, or no Parquet run at all). Every
    staging view has a fixed, typed column list: present columns are cast to the
    declared type, missing columns (or a missing table) become typed NULLs / an
    empty relation, so downstream models and tests always compile. -#}

{% macro typed_select(columns, present, from_sql) -%}
select
{%- for col in columns %}
    {% if col[0] | lower in present -%}
    cast({{ adapter.quote(col[0]) }} as {{ col[1] }})
    {%- else -%}
    cast(null as {{ col[1] }})
    {%- endif %} as {{ adapter.quote(col[0]) }}{{ "," if not loop.last }}
{%- endfor %}
from {{ from_sql }}
{%- endmacro %}

{% macro empty_select(columns) -%}
select
{%- for col in columns %}
    cast(null as {{ col[1] }}) as {{ adapter.quote(col[0]) }}{{ "," if not loop.last }}
{%- endfor %}
where false
{%- endmacro %}

{#- the typed column list ([name, data_type] pairs) of a source table, from its `columns:` in the
    source yml: the one place a raw table's columns and types are declared -#}
{% macro source_columns(source_name, table_name) -%}
{%- set columns = [] -%}
{%- for node in graph.sources.values() if node.source_name == source_name and node.name == table_name -%}
  {%- for col in node.columns.values() -%}
    {%- if not col.data_type -%}
      {{ exceptions.raise_compiler_error("source " ~ source_name ~ "." ~ table_name ~ " column " ~ col.name ~ " has no data_type") }}
    {%- endif -%}
    {%- do columns.append([col.name, col.data_type]) -%}
  {%- endfor -%}
{%- endfor -%}
{{ return(columns) }}
{%- endmacro %}

{#- select a raw table's declared columns (`columns`: [name, type] pairs, by default the source
    definition's), typed, or an empty typed relation when the table is missing -#}
{% macro select_source_or_empty(source_name, table_name, columns=none) -%}
{%- set rel = source(source_name, table_name) -%}
{%- set existing = none -%}
{%- if execute -%}
  {%- if columns is none -%}{%- set columns = source_columns(source_name, table_name) -%}{%- endif -%}
  {%- set existing = adapter.get_relation(database=rel.database, schema=rel.schema, identifier=rel.identifier) -%}
{%- endif -%}
{%- if not execute -%}
select 1 as parsing
{%- elif existing is not none -%}
  {%- set present = adapter.get_columns_in_relation(existing) | map(attribute='name') | map('lower') | list -%}
{{ typed_select(columns, present, rel) }}
{%- else -%}
{{ empty_select(columns) }}
{%- endif -%}
{%- endmacro %}

{#- the token-score directory (env PREDICTABASE_TOKEN_SCORES), without a trailing slash -#}
{% macro token_scores_dir() -%}
{{ env_var('PREDICTABASE_TOKEN_SCORES') | replace("'", "''") | trim | replace('\\', '/') }}
{%- endmacro %}

{#- the top-1 prediction directory (env PREDICTABASE_TOP1_PREDICTIONS; default: next to the token scores) -#}
{% macro top1_predictions_dir() -%}
{{ env_var('PREDICTABASE_TOP1_PREDICTIONS', env_var('PREDICTABASE_TOKEN_SCORES') ~ '/../top1_predictions') | replace("'", "''") | trim | replace('\\', '/') }}
{%- endmacro %}

{#- the cloze model-score directory (env PREDICTABASE_CLOZE_SCORES, the warehouse's Paths.cloze_model_scores;
    default: next to the token scores) -#}
{% macro cloze_scores_dir() -%}
{{ env_var('PREDICTABASE_CLOZE_SCORES', env_var('PREDICTABASE_TOKEN_SCORES') ~ '/../cloze_model_scores') | replace("'", "''") | trim | replace('\\', '/') }}
{%- endmacro %}

{#- the Monte-Carlo word-entropy directory (env PREDICTABASE_WORD_ENTROPY, the warehouse's Paths.word_entropy;
    default: next to the token scores) -#}
{% macro word_entropy_dir() -%}
{{ env_var('PREDICTABASE_WORD_ENTROPY', env_var('PREDICTABASE_TOKEN_SCORES') ~ '/../word_entropy') | replace("'", "''") | trim | replace('\\', '/') }}
{%- endmacro %}

{#- the temperature-scaled token-score directory (env PREDICTABASE_TEMPERATURE_SCORES, the warehouse's
    Paths.temperature_scores; default: next to the token scores) -#}
{% macro temperature_scores_dir() -%}
{{ env_var('PREDICTABASE_TEMPERATURE_SCORES', env_var('PREDICTABASE_TOKEN_SCORES') ~ '/../temperature_scores') | replace("'", "''") | trim | replace('\\', '/') }}
{%- endmacro %}

{#- number of files matching a glob (0 at parse time) -#}
{% macro count_files(pattern) -%}
{%- if execute -%}
  {%- set res = run_query("select count(*) from glob('" ~ pattern ~ "')") -%}
  {{- return(res.columns[0].values()[0] | int) -}}
{%- else -%}
  {{- return(0) -}}
{%- endif -%}
{%- endmacro %}

{#- select `columns` from an external source (Parquet / JSON glob), or an empty typed relation
    when no file matches `pattern` -#}
{% macro select_external_or_empty(source_name, table_name, pattern, columns) -%}
{%- set rel = source(source_name, table_name) -%}
{%- if count_files(pattern) > 0 -%}
  {%- set described = run_query("describe select * from " ~ rel) -%}
  {%- set present = described.columns[0].values() | map('lower') | list -%}
{{ typed_select(columns, present, rel) }}
{%- else -%}
{{ empty_select(columns) }}
{%- endif -%}
{%- endmacro %}
