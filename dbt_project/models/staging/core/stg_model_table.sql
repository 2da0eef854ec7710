-- The models by name (raw.model_table, from ingest/scoring/model_table.py), typed.
with source as (
{{ select_source_or_empty('raw', 'model_table') }}
),

renamed as (
    select
        model_key, display_name, family, n_parameters, parameters_source, hub_id, alias_package, sort_order,
        source, source_sha256
    from source
)

select * from renamed
