{#- The complete runs of the token lake as int_token_scores reads them: one key per `_run.json`, the run
    directory's names with the record's own run_id, model_key and corpus, written into the view as literals
    when it is built (a filter DuckDB evaluates once per file: bench/lake.py). None at parse time, or while
    `runs_relation` does not exist yet (then the view checks each row against stg_runs instead). -#}
{% macro complete_run_keys(runs_relation) -%}
{%- if not execute -%}{{ return(none) }}{%- endif -%}
{%- set existing = adapter.get_relation(
    database=runs_relation.database, schema=runs_relation.schema, identifier=runs_relation.identifier) -%}
{%- if existing is none -%}{{ return(none) }}{%- endif -%}
{%- set res = run_query("select distinct " ~ token_run_key('run_path', 'run_id', 'model_key', 'corpus')
    ~ " as k from " ~ runs_relation ~ " where run_path is not null order by k") -%}
{{ return(res.columns[0].values() | list) }}
{%- endmacro %}

{#- A token row's (or run record's) key: its run directory's names `model=<key>/corpus=<c>/run=<id>` and the
    run_id, model_key and corpus it carries, as one string. -#}
{% macro token_run_key(run_path, run_id, model_key, corpus) -%}
concat_ws('/', {{ run_path }}, {{ run_id }}, {{ model_key }}, {{ corpus }})
{%- endmacro %}

{#- Whether any file of an external source (read as in its external_location) has `column`: false at parse
    time and when no file matches `pattern`. -#}
{% macro external_has_column(source_name, table_name, pattern, column) -%}
{%- if not execute or count_files(pattern) == 0 -%}{{ return(false) }}{%- endif -%}
{%- set described = run_query("describe select * from " ~ source(source_name, table_name)) -%}
{{ return(column | lower in (described.columns[0].values() | map('lower') | list)) }}
{%- endmacro %}
