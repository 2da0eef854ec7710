-- raw.ucl_published_results, typed by its source definition (_regression__sources.yml); nothing to rename.
with source as (
{{ select_source_or_empty('regression', 'ucl_published_results') }}
),

renamed as (
    select * from source
)

select * from renamed
