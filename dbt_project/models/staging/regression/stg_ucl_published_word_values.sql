-- raw.ucl_published_word_values, typed by its source definition (_regression__sources.yml); nothing to rename.
with source as (
{{ select_source_or_empty('regression', 'ucl_published_word_values') }}
),

renamed as (
    select * from source
)

select * from renamed
