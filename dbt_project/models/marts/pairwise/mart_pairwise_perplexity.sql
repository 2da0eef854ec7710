-- Human (and language-model) perplexity from the pairwise game, Shlegeris et al. 2024, sec. 4 and appendices B-D.
-- One row per (predictor, subset, rounding, uncertainty_method). Predictor labels and kinds come from
-- seed pairwise_predictors, the subsets from seed pairwise_subsets.
--   lh_minus_lg_nats: equation 5 (int_pairwise_estimates), L_h - L_G in nats.
--   perplexity = exp(L_G + (L_h - L_G)), where L_G is the generator's (GPT-2 small's) true loss:
--     by default on the same questions (lg_source 'same_questions'), or a user-supplied value
--     (dbt var pairwise_lg_nats; the paper used L_G from 1000 questions, 10000-10999, lg_source
--     'user_supplied').
--   uncertainty_method 'two_sigma' (sec. 4.1.3 (1), Figure 4): bounds exp(L_G + d -/+ 2 sigma),
--     sigma = sd over questions / sqrt(N), all included players.
--   uncertainty_method 'bootstrap_players' (appendix B, Figure 7): B resamples each keeping a
--     random half of the players; lh_minus_lg_nats is the median, bounds the 5% / 95% quantiles
--     (linear interpolation), sigma_nats the standard deviation of the B estimates.
{%- set lg_user = var('pairwise_lg_nats', none) %}
with full_data as (
    select * from {{ ref('int_pairwise_estimates') }} where resample_id = 0
),

boot as (
    select
        predictor, rounding, subset,
        count(*) as n_resamples,
        median(lh_minus_lg_nats) as d_median,
        quantile_cont(lh_minus_lg_nats, 0.05) as d_q05,
        quantile_cont(lh_minus_lg_nats, 0.95) as d_q95,
        stddev_samp(lh_minus_lg_nats) as d_sd
    from {{ ref('int_pairwise_estimates') }}
    where resample_id > 0
    group by predictor, rounding, subset
),

players as (
    -- the subsets as in int_pairwise_estimates (seed pairwise_subsets)
    select a.predictor, a.rounding, s.subset, count(distinct a.player) as n_players
    from {{ ref('int_pairwise_predictor_answers') }} as a
    inner join {{ ref('pairwise_subsets') }} as s
        on s.question_set = a.question_set
        and (not s.word_tokens_only or a.is_word_token)
    group by a.predictor, a.rounding, s.subset
),

methods as (
    select
        f.predictor, f.subset, f.rounding, 'two_sigma' as uncertainty_method,
        f.n_questions, f.n_answers, cast(null as bigint) as n_resamples,
        f.lh_minus_lg_nats,
        f.sigma_nats,
        f.lh_minus_lg_nats - 2 * f.sigma_nats as lh_minus_lg_low_nats,
        f.lh_minus_lg_nats + 2 * f.sigma_nats as lh_minus_lg_high_nats,
        f.lg_same_questions_nats, f.predictor_true_loss_nats
    from full_data as f
    union all
    select
        f.predictor, f.subset, f.rounding, 'bootstrap_players' as uncertainty_method,
        f.n_questions, f.n_answers, b.n_resamples,
        b.d_median, b.d_sd, b.d_q05, b.d_q95,
        f.lg_same_questions_nats, f.predictor_true_loss_nats
    from full_data as f
    inner join boot as b using (predictor, rounding, subset)
),

with_lg as (
    select
        m.*,
        {%- if lg_user is not none %}
        cast({{ lg_user }} as double) as lg_nats,
        'user_supplied' as lg_source
        {%- else %}
        m.lg_same_questions_nats as lg_nats,
        'same_questions' as lg_source
        {%- endif %}
    from methods as m
)

select
    w.predictor,
    pr.predictor_label,
    pr.predictor_kind,
    pr.is_generator,
    w.subset,
    w.rounding,
    w.uncertainty_method,
    w.n_questions,
    w.n_answers,
    p.n_players,
    w.n_resamples,
    w.lh_minus_lg_nats,
    w.sigma_nats,
    w.lh_minus_lg_low_nats,
    w.lh_minus_lg_high_nats,
    w.lg_nats,
    w.lg_source,
    w.lg_same_questions_nats,
    w.lg_nats + w.lh_minus_lg_nats as lh_nats,
    exp(w.lg_nats + w.lh_minus_lg_nats) as perplexity,
    exp(w.lg_nats + w.lh_minus_lg_low_nats) as perplexity_low,
    exp(w.lg_nats + w.lh_minus_lg_high_nats) as perplexity_high,
    -- a language model's true loss on the same questions (unrounded models only: the rounded
    -- players round ratios, not the probability of y, so they have no true loss; sec. 4.1.4)
    case when w.rounding = 'exact' then w.predictor_true_loss_nats end as true_loss_nats,
    case when w.rounding = 'exact' then exp(w.predictor_true_loss_nats) end as true_perplexity
from with_lg as w
left join players as p using (predictor, rounding, subset)
-- labels, kind and which predictor is the generator G: seed pairwise_predictors
left join {{ ref('pairwise_predictors') }} as pr using (predictor)
