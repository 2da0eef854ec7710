{#- The warehouse inventory (mart_warehouse_tables), every list derived from dbt's graph, none written
    by hand: the raw tables are the sources declared in schema raw plus every table that exists there
    (a declared one that is missing counts 0 rows, present = false); the marts are every model whose
    schema is marts (a mart of the graph not built yet counts 0 rows, present = false), and the
    inventory itself, whose own row counts the rows it holds, itself included.

    `graph` is empty while dbt parses, so the marts cannot be `ref`s (dbt would refuse a ref it did not
    see at parse time) and dbt does not order this model after them. The model therefore counts the
    marts as they are when it runs, and the on-run-end hook `recount_warehouse_tables` rebuilds the
    table with the same query once every node of the run has finished: the counts it leaves are those
    of the marts as built. -#}

{% macro warehouse_tables_marts() -%}
  {%- set marts = [] -%}
  {%- for node in (graph.get('nodes') or {}).values() | sort(attribute='name') -%}
    {%- if node.resource_type == 'model' and node.schema == 'marts' and node.name != 'mart_warehouse_tables' -%}
      {%- do marts.append(node.name) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(marts) }}
{%- endmacro %}


{% macro _existing_tables(schema) -%}
  {%- set names = [] -%}
  {%- if execute -%}
    {%- set res = run_query("select table_name from information_schema.tables where table_schema = '" ~ schema
                            ~ "' and table_catalog = current_database() order by table_name") -%}
    {%- for t in res.columns[0].values() -%}{%- do names.append(t) -%}{%- endfor -%}
  {%- endif -%}
  {{ return(names) }}
{%- endmacro %}


{% macro warehouse_tables_query(token_scores_relation, runs_relation) -%}
{%- set declared = [] -%}
{%- for s in (graph.get('sources') or {}).values() if s.schema == 'raw' -%}{%- do declared.append(s.identifier) -%}{%- endfor -%}
{%- set existing_raw = _existing_tables('raw') -%}
{%- set existing_marts = _existing_tables('marts') -%}
{%- set raw_tables = (declared + existing_raw) | unique | sort -%}
with counted as (
{%- for t in raw_tables %}
{%- if t in existing_raw %}
    select 'raw.{{ t }}' as table_name, 'raw' as layer, count(*) as n_rows, true as present from raw."{{ t }}"
{%- else %}
    select 'raw.{{ t }}' as table_name, 'raw' as layer, cast(0 as bigint) as n_rows, false as present
{%- endif %}
    union all
{%- endfor %}
    select 'parquet token_scores (complete runs)', 'parquet', count(*), count(*) > 0 from {{ token_scores_relation }}
    union all
    select 'parquet _run.json (complete runs)', 'parquet', count(*), count(*) > 0 from {{ runs_relation }}
{%- for m in warehouse_tables_marts() %}
    union all
{%- if m in existing_marts %}
    select '{{ m }}', 'mart', count(*), true from marts."{{ m }}"
{%- else %}
    select '{{ m }}', 'mart', cast(0 as bigint), false
{%- endif %}
{%- endfor %}
)
select table_name, layer, n_rows, present from counted
union all
select 'mart_warehouse_tables', 'mart', count(*) + 1, true from counted
{%- endmacro %}


{#- on-run-end (dbt_project.yml): the SQL that rebuilds marts.mart_warehouse_tables, when it exists, with
    the counts of the marts as this run left them; nothing after commands that do not build -#}
{% macro recount_warehouse_tables() -%}
  {%- if execute and flags.WHICH in ('build', 'run') -%}
    {%- set inventory = graph.nodes.get('model.predictabase.mart_warehouse_tables') -%}
    {%- set token_scores = graph.nodes.get('model.predictabase.int_token_scores') -%}
    {%- set runs = graph.nodes.get('model.predictabase.stg_runs') -%}
    {%- set nodes = [inventory, token_scores, runs] -%}
    {%- set ns = namespace(ready=(nodes | select | list | length) == 3) -%}
    {%- for n in (nodes if ns.ready else []) -%}
      {%- if not adapter.get_relation(database=n.database, schema=n.schema, identifier=n.alias) -%}
        {%- set ns.ready = false -%}
      {%- endif -%}
    {%- endfor -%}
    {%- if ns.ready -%}
create or replace table {{ inventory.relation_name }} as
{{ warehouse_tables_query(token_scores.relation_name, runs.relation_name) }}
    {%- endif -%}
  {%- endif -%}
{%- endmacro %}
