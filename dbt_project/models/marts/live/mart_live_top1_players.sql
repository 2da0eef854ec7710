-- Each live player's top-1 accuracy, next to each model's on the same positions and the study's players
-- (macros top1_answer_outcomes and top1_player_summary, dbt_project/macros/live_games.sql: the same SQL the
-- game page runs over a player's answers while they play). One row per (player, model); model_key NULL when
-- no model has a prediction on any of the player's positions. The study's distribution: the players of
-- int_top1_player_accuracy (what mart_top1_player_accuracy publishes) with >= 50 possible answers, not excluded
-- (subset all_possible; Shlegeris et al. 2024, Fig. 1). The questions are int_live_top1_questions (the rows of
-- mart_live_top1_questions) and the models' candidates int_live_top1_model_candidates (which
-- mart_live_top1_model_candidates publishes): the game page runs the same macros over those two marts.
{%- set answers -%}
(select player_id, corpus, doc_id, position, guess from {{ ref('stg_top1_guesses') }} where source = 'live')
{%- endset %}
with outcomes as (
    {{ top1_answer_outcomes(answers, ref('int_live_top1_questions'), ref('int_live_top1_model_candidates')) }}
),

study as (
    {{ top1_study_players(ref('int_top1_player_accuracy')) }}
),

summary as (
    {{ top1_player_summary('outcomes', 'study') }}
)

select
    'live' as source,
    s.player_id,
    p.player_label,
    s.n_answers,
    s.n_correct,
    s.accuracy,
    s.n_study_players,
    s.share_of_study_players_below,
    s.model_key,
    s.n_model_positions,
    s.model_accuracy,
    s.accuracy_same_positions
from summary as s
left join {{ ref('stg_live_players') }} as p on p.player_id = s.player_id
