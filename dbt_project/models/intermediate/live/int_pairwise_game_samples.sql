-- The 400 generator samples x_k of each question of int_pairwise_game_questions, drawn from G(c) by the
-- study (sec. 4.1.1), with ln g(x_k|c): the live game shows y against x_k for a k drawn uniformly, which is a
-- draw from G(c) as the importance-sampling estimator (eq. 4) needs.
select
    s.comparison_id,
    s.k,
    s.sample_token,
    s.is_true_token,
    s.generator_logprob_x_nats
from {{ ref('stg_pairwise_samples') }} as s
inner join {{ ref('int_pairwise_game_questions') }} as q on q.comparison_id = s.comparison_id
