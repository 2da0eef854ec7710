-- Per player and subset: how often the player's guess was the true next token (Shlegeris et al. 2024, Figure 1:
-- all possible questions; Figure 2: word tokens). Answers in analysis only (int_top1_guesses: not out of
-- range, not impossible); excluded accounts (seed top1_excluded_players) are listed, flagged.
with guesses as (
    select * from {{ ref('int_top1_guesses') }}
    where not is_out_of_range and not is_impossible
),

subsets as (
    select 'all_possible' as subset
    union all
    select 'word_tokens'
),

per_player as (
    select
        g.player_id, s.subset,
        any_value(g.is_excluded_player) as is_excluded_player,
        any_value(g.exclusion_basis) as exclusion_basis,
        count(*) as answers,
        count(*) filter (where g.is_correct) as correct
    from guesses as g
    inner join subsets as s on s.subset = 'all_possible' or g.is_word_token
    group by g.player_id, s.subset
),

totals as (
    select player_id, count(*) as answers_all_possible
    from guesses
    group by player_id
)

select
    p.player_id, p.subset, p.answers, p.correct,
    p.correct / p.answers as accuracy,
    t.answers_all_possible,
    t.answers_all_possible >= 50 as has_min_50_answers,
    p.is_excluded_player, p.exclusion_basis
from per_player as p
inner join totals as t using (player_id)
