-- The game's GPT-2 vocabulary (stg_game_vocabulary), as the live top-1 game lists it: one row per token id,
-- with the token as the game wrote it and a display form where spaces, newlines and tabs are visible
-- ('␣', '↵', '⇥'). Several ids read the same (partial UTF-8 bytes read U+FFFD).
select
    token_id,
    token,
    replace(replace(replace(token, ' ', '␣'), chr(10), '↵'), chr(9), '⇥') as token_display
from {{ ref('stg_game_vocabulary') }}
