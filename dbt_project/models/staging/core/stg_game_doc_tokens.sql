-- The LM-game documents' GPT-2 token lists (raw.game_doc_tokens), typed.
with source as (
{{ select_source_or_empty('raw', 'game_doc_tokens') }}
),

renamed as (
    select * from source  -- typed by the source definition; nothing to rename
)

select * from renamed
