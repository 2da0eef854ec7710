-- The game's GPT-2 vocabulary as it displayed it (server/tokens.json), one row per token id, typed.
with source as (
{{ select_source_or_empty('top1', 'game_vocabulary') }}
),

renamed as (
    select * from source  -- typed by the source definition; nothing to rename
)

select * from renamed
