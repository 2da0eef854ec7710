-- The live games' macros are the study's logic: mart_pairwise_player_perplexity's pooled study rows (macros
-- pairwise_answer_terms + pairwise_group_perplexity) must equal mart_pairwise_perplexity's humans (the study's
-- own models int_pairwise_*), per question set, the game's 11 choices, +/- 2 sigma. Returns the rows that differ.
with mine as (
    select question_scope as subset, n_questions, n_answers, lh_minus_lg_nats, sigma_nats, lg_nats
    from {{ ref('mart_pairwise_player_perplexity') }}
    where scope = 'pooled' and source = 'study'
),

study as (
    select subset, n_questions, n_answers, lh_minus_lg_nats, sigma_nats, lg_same_questions_nats as lg_nats
    from {{ ref('mart_pairwise_perplexity') }}
    where predictor_kind = 'human' and rounding = 'interface_11' and uncertainty_method = 'two_sigma'
        and subset in ('set_1', 'set_2')
)

select s.subset, m.subset as mine_subset, s.lh_minus_lg_nats, m.lh_minus_lg_nats as mine_lh_minus_lg_nats
from study as s
full outer join mine as m on m.subset = s.subset
where m.subset is null or s.subset is null
    or s.n_questions <> m.n_questions or s.n_answers <> m.n_answers
    or abs(s.lh_minus_lg_nats - m.lh_minus_lg_nats) > 1e-9
    or abs(s.sigma_nats - m.sigma_nats) > 1e-9
    or abs(s.lg_nats - m.lg_nats) > 1e-9
