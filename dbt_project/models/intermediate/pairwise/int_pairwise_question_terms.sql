-- One row per (resample, predictor, rounding, question): Shlegeris et al. 2024, equation 4,
--     h(y|c)/g(y|c) ~= ( (1/n) sum_{x ~ G(c)} g(y|c)/g(x|c) * r(x, y|c) )^-1,
-- where the sum runs over the n answered samples of the question (all answer rows of the
-- resample's players, duplicates of the same sample by different players included), and its
-- log, log_mean_term_nats = ln((1/n) sum ...) ~= ln g(y|c) - ln h(y|c): the summand of equation 5.
select
    r.resample_id,
    a.predictor,
    a.rounding,
    a.comparison_id,
    any_value(a.question_set) as question_set,
    any_value(a.is_word_token) as is_word_token,
    count(*) as n_answers,
    count(distinct a.player) as n_players,
    avg(a.term) as mean_term,
    ln(avg(a.term)) as log_mean_term_nats,
    any_value(a.generator_loss_nats) as generator_loss_nats,
    any_value(a.predictor_loss_nats) as predictor_loss_nats
from {{ ref('int_pairwise_predictor_answers') }} as a
inner join {{ ref('int_pairwise_resamples') }} as r on r.player = a.player
group by r.resample_id, a.predictor, a.rounding, a.comparison_id
