-- The top-1 game's human guesses, one row per guess, from two sources (`source`):
--   'study': every upstream row of the LM game (res_accuracy_anonym.json), typed, on corpus lm_game;
--   'live':  the dashboard's live game (raw.live_top1_answers), on any corpus; player ids 'live:<id>'.
-- The true token is not here: int_top1_guesses joins it for the study (correct_answer_upstream is a front-end
-- bug), mart_live_top1_answers for the live game.
with study as (
{{ select_source_or_empty('top1', 'top1_guesses') }}
),

live as (
{{ select_source_or_empty('live', 'live_top1_answers') }}
)

select
    'study' as source, row_id, player_id, 'lm_game' as corpus, doc_id, position, guess, correct_answer_upstream,
    source_path, source_sha256
from study
union all
select
    'live' as source, answer_id as row_id, 'live:' || player_id as player_id, corpus, doc_id, position, guess,
    cast(null as varchar) as correct_answer_upstream, source_path, source_sha256
from live
