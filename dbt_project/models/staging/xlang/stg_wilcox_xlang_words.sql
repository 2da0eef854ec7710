-- raw.wilcox_xlang_words, typed by its source definition (_xlang__sources.yml); nothing to rename.
with source as (
{{ select_source_or_empty('xlang', 'wilcox_xlang_words') }}
),

renamed as (
    select * from source
)

select * from renamed
