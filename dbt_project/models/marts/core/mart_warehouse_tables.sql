-- One row per raw table (every table of schema raw, plus the raw tables this project
-- declares even while they are missing: 0 rows, present = false), per Parquet dataset
-- (complete runs only) and per mart of the perplexity/home pages, with its row count.
{%- set declared = ['source_files', 'documents', 'words', 'game_doc_tokens', 'imported_word_surprisal'] %}
{%- set marts = ['mart_sources', 'mart_models', 'mart_model_perplexity', 'mart_build_info'] %}
{%- set existing = [] %}
{%- for t in declared %}{% set rel = source('raw', t) %}{% endfor %}
{%- if execute %}
  {%- set res = run_query("select table_name from information_schema.tables where table_schema = 'raw' and table_type = 'BASE TABLE' order by table_name") %}
  {%- for t in res.columns[0].values() %}{% do existing.append(t) %}{% endfor %}
{%- endif %}
{%- set raw_tables = (declared + existing) | unique | sort %}
{%- for t in raw_tables %}
{%- if t in existing %}
select 'raw.{{ t }}' as table_name, 'raw' as layer, count(*) as n_rows, true as present from raw."{{ t }}"
{%- else %}
select 'raw.{{ t }}' as table_name, 'raw' as layer, cast(0 as bigint) as n_rows, false as present
{%- endif %}
union all
{%- endfor %}
select 'parquet token_scores (complete runs)', 'parquet', count(*), count(*) > 0 from {{ ref('int_token_scores') }}
union all
select 'parquet _run.json (complete runs)', 'parquet', count(*), count(*) > 0 from {{ ref('stg_runs') }}
{%- for m in marts %}
union all
select '{{ m }}', 'mart', count(*), true from {{ ref(m) }}
{%- endfor %}
