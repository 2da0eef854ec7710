-- One row per (included answer, predictor, rounding): the summand of Shlegeris et al. 2024, equation 4,
--     g(y|c) / g(x|c) * r(x, y|c),
-- for the sample x = x_k shown against the true token y in context c.
--   * humans: p = p_percent / 100 is the stated probability that y is the real token, so
--     r(x, y|c) = h(x|c) / h(y|c) = (1 - p) / p   (sec. 4.1: r = h(x)/h(y); eq. 9: p* = h(y)/(h(x)+h(y)));
--   * language models as players (sec. 4.1.4) answer the SAME (question, sample) rows as the
--     included humans, with r = p_m(x|c) / p_m(y|c) ('exact'), or with p = p_m(y)/(p_m(x)+p_m(y))
--     rounded to the nearest interface choice first ('interface_11': 1%, 10%, ..., 90%, 99%);
--   * coarser roundings (appendix C), applied to everyone's p, humans post hoc:
--     'coarse_5' = nearest of 0.1, 0.2, 0.5, 0.8, 0.9; 'coarse_3' = nearest of 0.2, 0.5, 0.8.
--     Nearest in probability; a tie goes to the smaller choice. The choices of each level are
--     seed pairwise_rounding_choices; the predictors and their labels seed pairwise_predictors.
-- g is the generator G = GPT-2 small (the comparison file's generator_index model); g(y|c) and
-- g(x|c) come from its log-probabilities (correct_logprobs / generated_logprobss), as upstream.
-- Auto-answered rows (x_k = y, answered 50 %) are kept: their summand is exactly 1.
with included as (
    select
        a.answer_id, a.player, a.comparison_id, a.k, a.p_percent, a.auto_answered,
        q.question_set, q.is_word_token,
        q.generator_logprob_y_nats, s.generator_logprob_x_nats,
        q.logprob_y_two_layers_nats, s.logprob_x_two_layers_nats,
        q.logprob_y_twelve_layers_nats, s.logprob_x_twelve_layers_nats,
        q.logprob_y_twenty_four_layers_nats, s.logprob_x_twenty_four_layers_nats
    from {{ ref('stg_pairwise_answers') }} as a
    inner join {{ ref('stg_pairwise_questions') }} as q on q.comparison_id = a.comparison_id
    inner join {{ ref('int_pairwise_players') }} as pl
        on pl.player = a.player and pl.question_set = q.question_set and pl.is_included
    inner join {{ ref('stg_pairwise_samples') }} as s on s.comparison_id = a.comparison_id and s.k = a.k
    where a.source = 'study'  -- the published study; live answers are estimated in mart_pairwise_player_perplexity
),

-- the predictors (seed pairwise_predictors): humans, and each language model with the stem of its
-- log-probability columns in the comparison files (logprob_y_<stem>_nats, logprob_x_<stem>_nats)
predictors as (
    select predictor, predictor_kind, logprob_columns from {{ ref('pairwise_predictors') }}
),

-- one row per (answer, predictor): for language models ln p_m(y|c) and ln p_m(x|c)
with_logprobs as (
    select i.*, p.predictor, p.predictor_kind,
        case p.logprob_columns
            {%- for stem in ['two_layers', 'twelve_layers', 'twenty_four_layers'] %}
            when '{{ stem }}' then i.logprob_y_{{ stem }}_nats
            {%- endfor %}
        end as predictor_logprob_y_nats,
        case p.logprob_columns
            {%- for stem in ['two_layers', 'twelve_layers', 'twenty_four_layers'] %}
            when '{{ stem }}' then i.logprob_x_{{ stem }}_nats
            {%- endfor %}
        end as predictor_logprob_x_nats
    from included as i
    cross join predictors as p
),

-- the predictor's probability that y is real (p_y): a human's stated p, a language model's
-- p_m(y) / (p_m(x) + p_m(y))
by_predictor as (
    select *,
        case when predictor_kind = 'human' then p_percent / 100.0
            else 1.0 / (1.0 + exp(predictor_logprob_x_nats - predictor_logprob_y_nats))
        end as p_y
    from with_logprobs
),

-- the answer choices of each rounding level (seed pairwise_rounding_choices)
choices as (
    select rounding, choice from {{ ref('pairwise_rounding_choices') }}
),

rounded as (
    -- the nearest choice to p_y (ties to the smaller choice); humans' interface_11 answers are unchanged
    select b.*, c.rounding, c.choice as p_true_token,
        (1.0 - c.choice) / c.choice as r_x_over_y,                                    -- r = (1 - p) / p
        exp(b.generator_logprob_y_nats - b.generator_logprob_x_nats)
            * (1.0 - c.choice) / c.choice as term                                     -- eq. 4 summand
    from by_predictor as b
    cross join choices as c
    qualify row_number() over (
        partition by b.answer_id, b.predictor, c.rounding
        order by abs(b.p_y - c.choice), c.choice
    ) = 1
),

exact as (
    -- language models unrounded: r = p_m(x|c) / p_m(y|c); the summand is computed in log space as
    -- exp((ln g(y) - ln p_m(y)) + (ln p_m(x) - ln g(x))), exactly 1 when the player is G itself
    select *, 'exact' as rounding, p_y as p_true_token,
        exp(predictor_logprob_x_nats - predictor_logprob_y_nats) as r_x_over_y,
        exp((generator_logprob_y_nats - predictor_logprob_y_nats)
            + (predictor_logprob_x_nats - generator_logprob_x_nats)) as term
    from by_predictor
    where predictor_kind = 'language_model'
)

select
    answer_id, player, comparison_id, k, question_set, is_word_token, auto_answered,
    predictor, rounding, p_true_token, r_x_over_y,
    exp(generator_logprob_y_nats - generator_logprob_x_nats) as importance_weight,
    term,
    -generator_logprob_y_nats as generator_loss_nats,
    -predictor_logprob_y_nats as predictor_loss_nats
from (
    select * from rounded
    union all by name
    select * from exact
) as answers
