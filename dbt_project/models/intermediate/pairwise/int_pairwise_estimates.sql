-- One row per (resample, predictor, rounding, subset): Shlegeris et al. 2024, equation 5,
--     L_h - L_G ~= (1/N) sum_{(c,y)} ln( (1/n) sum_{x ~ G(c)} g(y|c)/g(x|c) * r(x, y|c) ),
-- the mean over the subset's N questions of log_mean_term_nats, with sec. 4.1.3 (1)'s
-- uncertainty sigma = (standard deviation over questions) / sqrt(N) (population sd, ddof 0, as
-- the authors' numpy .std()). Also the generator's true loss L_G on the same questions
-- (mean of -ln g(y|c)) and, for language models, the predictor's own true loss there.
-- Subsets: all 120 questions, word tokens (appendix D: y = space + letters), each set alone.
with subsets as (
    -- seed pairwise_subsets: a question belongs to a subset when the subset lists its question
    -- set and, for word_tokens_only, y is a word token
    select subset, question_set, word_tokens_only from {{ ref('pairwise_subsets') }}
),

terms as (
    select s.subset, t.*
    from {{ ref('int_pairwise_question_terms') }} as t
    inner join subsets as s
        on s.question_set = t.question_set
        and (not s.word_tokens_only or t.is_word_token)
)

select
    resample_id,
    predictor,
    rounding,
    subset,
    count(*) as n_questions,
    cast(sum(n_answers) as bigint) as n_answers,
    avg(log_mean_term_nats) as lh_minus_lg_nats,
    stddev_pop(log_mean_term_nats) as sd_over_questions_nats,
    stddev_pop(log_mean_term_nats) / sqrt(count(*)) as sigma_nats,
    avg(generator_loss_nats) as lg_same_questions_nats,
    avg(predictor_loss_nats) as predictor_true_loss_nats
from terms
group by resample_id, predictor, rounding, subset
