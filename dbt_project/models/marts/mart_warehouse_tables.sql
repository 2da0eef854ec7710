-- One row per raw table, Parquet dataset and mart with its row count (a raw table not yet
-- written counts 0 rows and has present = false). Parquet rows count complete runs only.
{%- set raw_tables = ['source_files', 'documents', 'words', 'game_doc_tokens', 'imported_word_surprisal'] %}
{%- set marts = ['mart_sources', 'mart_models', 'mart_model_perplexity', 'mart_build_info'] %}
{%- set present = {} %}
{%- if execute %}
  {%- for t in raw_tables %}
    {%- set rel = source('raw', t) %}
    {%- do present.update({t: adapter.get_relation(database=rel.database, schema=rel.schema, identifier=rel.identifier) is not none}) %}
  {%- endfor %}
{%- else %}
  {%- for t in raw_tables %}{% do source('raw', t) %}{% endfor %}
{%- endif %}
{%- for t in raw_tables %}
select 'raw.{{ t }}' as table_name, 'raw' as layer, count(*) as n_rows, {{ present.get(t, false) }} as present
from {{ ref('stg_' ~ t) }}
union all
{%- endfor %}
select 'parquet token_scores (complete runs)', 'parquet', count(*), count(*) > 0 from {{ ref('stg_token_scores') }}
union all
select 'parquet _run.json (complete runs)', 'parquet', count(*), count(*) > 0 from {{ ref('stg_runs') }}
{%- for m in marts %}
union all
select '{{ m }}', 'mart', count(*), true from {{ ref(m) }}
{%- endfor %}
