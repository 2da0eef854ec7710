-- The live games' players (raw.live_players), typed, with the label the marts show: the name as typed when
-- the player agreed to it, else "player <salted hash>" or, anonymous, "anonymous <id>".
with source as (
{{ select_source_or_empty('live', 'live_players') }}
)

select
    'live:' || player_id as player_id,
    display_name,
    name_hash,
    name_consent,
    coalesce(display_name, 'player ' || name_hash, 'anonymous ' || player_id) as player_label,
    created_at,
    source,
    source_path,
    source_sha256,
    store_id
from source
