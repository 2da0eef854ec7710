-- Human perplexity from the pairwise game per player and pooled, for the published study and the live game
-- apart (`source`), by Shlegeris et al. 2024, eqs. 4-5 with the +/- 2 sigma interval of sec. 4.1.3 (1): macros
-- pairwise_answer_terms and pairwise_group_perplexity (dbt_project/macros/live_games.sql), the SQL the game
-- page runs over a player's answers at the end of their game.
--   study: each included player (int_pairwise_players: every question of a set answered exactly once) on that
--          set (question_scope set_1 / set_2), and all of them pooled per set, which is the study's estimate:
--          the pooled rows equal mart_pairwise_perplexity's humans, subset set_1 / set_2, the 11 choices,
--          two_sigma (tests/live/assert_pooled_study_equals_pairwise_mart.sql);
--   live:  each live player on the questions of sets 1 and 2 they answered (question_scope 'live'; training
--          out), and all live players pooled. The live game deals only samples that differ from the true
--          token and the estimator answers the identical ones itself (pairwise_answer_terms' playable_deal).
{%- set answers -%}
(
    select a.source, a.player, a.comparison_id, a.k, a.p_percent, a.true_token_shown_as,
        case when a.source = 'study' then q.question_set else 'live' end as question_scope
    from {{ ref('stg_pairwise_answers') }} as a
    inner join {{ ref('stg_pairwise_questions') }} as q on q.comparison_id = a.comparison_id
    left join {{ ref('int_pairwise_players') }} as p on p.player = a.player and p.question_set = q.question_set
    where q.question_set in ('set_1', 'set_2') and (a.source = 'live' or p.is_included)
)
{%- endset %}
with terms as (
    {{ pairwise_answer_terms(answers, ref('int_pairwise_game_questions'), ref('int_pairwise_game_samples'),
                             playable_deal="a.source = 'live'") }}
),

per_player as (
    {{ pairwise_group_perplexity('terms', 'source, question_scope, player') }}
),

pooled as (
    {{ pairwise_group_perplexity('terms', 'source, question_scope') }}
),

rows as (
    select 'player' as scope, source, question_scope, player as player_id, n_questions, n_answers,
        lh_minus_lg_nats, sigma_nats, lg_nats, lh_nats, perplexity, perplexity_low, perplexity_high
    from per_player
    union all
    select 'pooled' as scope, source, question_scope, cast(null as varchar) as player_id, n_questions, n_answers,
        lh_minus_lg_nats, sigma_nats, lg_nats, lh_nats, perplexity, perplexity_low, perplexity_high
    from pooled
)

select
    r.scope,
    r.source,
    r.question_scope,
    r.player_id,
    case
        when r.scope = 'pooled' then 'all ' || r.source || ' players'
        when r.source = 'live' then coalesce(p.player_label, r.player_id)
        else 'study player ' || r.player_id
    end as player_label,
    r.n_questions,
    r.n_answers,
    r.lh_minus_lg_nats,
    r.sigma_nats,
    r.lg_nats,
    r.lh_nats,
    r.perplexity,
    r.perplexity_low,
    r.perplexity_high
from rows as r
left join {{ ref('stg_live_players') }} as p on p.player_id = r.player_id
