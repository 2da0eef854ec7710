-- raw.pimentel_meister_words, typed by its source definition (_regression__sources.yml); nothing to rename.
with source as (
{{ select_source_or_empty('regression', 'pimentel_meister_words') }}
),

renamed as (
    select * from source
)

select * from renamed
