-- Words as each corpus defines them, with spans into documents.text (raw.words), typed.
with source as (
{{ select_source_or_empty('raw', 'words') }}
),

renamed as (
    select * from source  -- typed by the source definition; nothing to rename
)

select * from renamed
