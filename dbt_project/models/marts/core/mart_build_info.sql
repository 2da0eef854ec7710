-- One row describing this build of the warehouse.
select
    cast('{{ run_started_at.isoformat() }}' as timestamptz) as built_at,
    '{{ dbt_version }}' as dbt_version,
    version() as duckdb_version,
    '{{ invocation_id }}' as invocation_id,
    (select count(*) from {{ ref('int_runs') }}) as n_complete_runs,
    (select count(*) from {{ ref('int_runs') }} where used_in_marts) as n_runs_used_in_marts
