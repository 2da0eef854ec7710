-- raw.pimentel_meister_delta_llh, typed by its source definition (_regression__sources.yml); nothing to rename.
with source as (
{{ select_source_or_empty('regression', 'pimentel_meister_delta_llh') }}
),

renamed as (
    select * from source
)

select * from renamed
