-- The live pairwise game's answers (stg_pairwise_answers, source = 'live'), one row per answer, training
-- included (question_set 'training'), with the summand of eq. 4 and the points of sec. 4.1.2 (macro
-- pairwise_answer_terms, dbt_project/macros/live_games.sql, which the game page also runs). The live game deals
-- only samples that differ from the true token: the summand answers the identical ones itself, and is NULL for
-- an answer on an identical sample (stored before the game stopped dealing them).
{%- set answers -%}
(select * from {{ ref('stg_pairwise_answers') }} where source = 'live')
{%- endset %}
with terms as (
    {{ pairwise_answer_terms(answers, ref('int_pairwise_game_questions'), ref('int_pairwise_game_samples'),
                             playable_deal='true') }}
)

select
    t.source,
    t.answer_id,
    t.player as player_id,
    p.player_label,
    t.comparison_id,
    t.question_set,
    t.k,
    t.true_token_shown_as,
    t.p_percent,
    t.auto_answered,
    t.importance_weight,
    t.r_x_over_y,
    t.term,
    t.points,
    t.source_path,
    t.source_sha256
from terms as t
left join {{ ref('stg_live_players') }} as p on p.player_id = t.player
