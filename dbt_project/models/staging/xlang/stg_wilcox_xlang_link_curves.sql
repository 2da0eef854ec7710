-- raw.wilcox_xlang_link_curves, typed by its source definition (_xlang__sources.yml); nothing to rename.
with source as (
{{ select_source_or_empty('xlang', 'wilcox_xlang_link_curves') }}
),

renamed as (
    select * from source
)

select * from renamed
