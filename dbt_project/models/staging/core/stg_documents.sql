-- Texts to score (raw.documents), typed.
with source as (
{{ select_source_or_empty('raw', 'documents') }}
),

renamed as (
    select * from source  -- typed by the source definition; nothing to rename
)

select * from renamed
