-- One row per raw table (every source declared in schema raw and every table that exists there; a
-- declared table that is missing counts 0 rows, present = false), per Parquet dataset (complete runs
-- only) and per mart: every model of the graph in schema marts, this one included. The lists come
-- from dbt's graph (macros/warehouse_tables.sql), so a new source or mart appears here by itself;
-- the on-run-end hook recounts the marts once the run has built them.
{{ warehouse_tables_query(ref('int_token_scores'), ref('stg_runs')) }}
