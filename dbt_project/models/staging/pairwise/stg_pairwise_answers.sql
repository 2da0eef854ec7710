-- The pairwise game's human answers, one row per answer, from two sources (`source`):
--   'study': every upstream answer of res_loss_anonym.json;
--   'live':  the dashboard's live game (raw.live_pairwise_answers); player ids 'live:<id>'.
-- p_percent is the player's probability (percent) that the TRUE token y is the real next token when shown y
-- against the generator sample x_k; true_token_shown_as, which of the two buttons' tokens (A or B) it was
-- (the live game records it; the study did not).
with study as (
{{ select_source_or_empty('pairwise', 'pairwise_answers') }}
),

live as (
{{ select_source_or_empty('live', 'live_pairwise_answers') }}
)

select
    'study' as source, answer_id, player, comparison_id, k, p_percent, auto_answered,
    cast(null as varchar) as true_token_shown_as, source_path, source_sha256
from study
union all
select
    'live' as source, answer_id, 'live:' || player_id as player, comparison_id, k, p_percent, auto_answered,
    true_token_shown_as, source_path, source_sha256
from live
