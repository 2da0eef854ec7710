{#- The live games' metrics, ONE definition used twice: by the dbt marts over every player
    (mart_pairwise_player_perplexity, mart_live_pairwise_answers, mart_live_top1_players), and by the game pages
    over the player's own answers at the end of a game (dashboards/live_games.py renders this file with Jinja
    and runs the SQL in an in-memory DuckDB). So these macros use plain Jinja only: no ref(), var() or adapter;
    the caller passes the relations. -#}

{#- Shlegeris et al. 2024, sec. 4.1.2, the reward shown as points: a player says p = their percent that token A is the
    original, and scores
        R(p) = 1000 ( g(A|c) (ln p - ln 0.5) 1[A is the original] + g(B|c) (ln(1 - p) - ln 0.5) 1[B is the original] )
    where g is the generator GPT-2 small; 0 points for 50 %. `p_a_percent` may be an expression
    (`100.0 - a.p_percent`): it is parenthesised here. -#}
{% macro pairwise_points(p_a_percent, a_is_true, logprob_a_nats, logprob_b_nats) -%}
(1000.0 * case when {{ a_is_true }}
    then exp({{ logprob_a_nats }}) * (ln(({{ p_a_percent }}) / 100.0) - ln(0.5))
    else exp({{ logprob_b_nats }}) * (ln(1.0 - ({{ p_a_percent }}) / 100.0) - ln(0.5))
end)
{%- endmacro %}

{#- One row per answer with its summand of Shlegeris et al. 2024, eq. 4, g(y|c)/g(x|c) * r(x, y|c), r = (1 - p)/p for the
    stated probability p that the true token y is the original (as int_pairwise_predictor_answers for humans,
    whose answers are already the game's choices), and its points (sec. 4.1.2). `answers` needs player,
    comparison_id, k, p_percent and true_token_shown_as ('A'/'B'; NULL for the study, which did not record it).
    `samples` needs is_true_token (x_k = y) besides ln g(x_k|c): every sample of each answered question.

    Identical candidates (Shlegeris et al. 2024, sec. 4.1.2, last paragraph): on a round where the sample x is
    y itself the website asked nothing and answered "both as likely", r(y, y|c) = 1, and the round stays in the
    average of eq. 4 (the sum of eq. 2 runs over the whole vocabulary, y included, where r(y, y|c) = 1); its
    summand is g(y|c)/g(x|c) * 1, which is 1 for the same token. Identical is is_true_token: x_k = y as the
    comparison file writes them, which is what the study's website compared (its answers are 50 % exactly there):
    two different partial byte tokens, both written U+FFFD, count as identical, with a summand g(y|c)/g(x|c) <> 1.
    `playable_deal`, a SQL condition on the answer `a`, says how its sample was drawn:
      * false (the study): uniformly among the 400 samples, identical ones included (answered 50 %), so each
        answer's summand is the one above and eq. 4 averages the answers as they are;
      * true (the live game, which never shows an identical pair: dashboards/live_games.py deal_pairwise):
        uniformly among the question's playable samples P (x_k <> y) only. The identical samples S are then
        answered by the estimator itself, with their known r = 1, and the one answered sample stands for P:
            summand = (1/n) sum_{k in S} g(y|c)/g(x_k|c)  +  |P|/n * g(y|c)/g(x|c) r(x, y|c),   n = |S| + |P|,
        whose mean over the dealt x in P is exactly eq. 4's mean over all n samples with every identical one
        answered 50 % as the study's website did (the paper's estimator, computed rather than sampled for S).
        An answer ON an identical sample (stored before the game dealt playable samples only) has a NULL
        summand and is left out of the estimate (pairwise_group_perplexity), as if its question was not dealt. -#}
{% macro pairwise_answer_terms(answers, questions, samples, playable_deal='false') -%}
select
    a.*,
    q.question_set,
    q.is_word_token,
    exp(q.generator_logprob_y_nats - s.generator_logprob_x_nats) as importance_weight,
    (100.0 - a.p_percent) / a.p_percent as r_x_over_y,
    case
        when not ({{ playable_deal }})
            then exp(q.generator_logprob_y_nats - s.generator_logprob_x_nats) * (100.0 - a.p_percent) / a.p_percent
        when s.is_true_token then null
        else st.identical_summands / st.n_samples
            + st.n_playable / st.n_samples
            * exp(q.generator_logprob_y_nats - s.generator_logprob_x_nats) * (100.0 - a.p_percent) / a.p_percent
    end as term,
    -q.generator_logprob_y_nats as generator_loss_nats,
    case a.true_token_shown_as
        when 'A' then {{ pairwise_points('a.p_percent', 'true', 'q.generator_logprob_y_nats', 's.generator_logprob_x_nats') }}
        when 'B' then {{ pairwise_points('100.0 - a.p_percent', 'false', 's.generator_logprob_x_nats', 'q.generator_logprob_y_nats') }}
    end as points
from {{ answers }} as a
inner join {{ questions }} as q on q.comparison_id = a.comparison_id
inner join {{ samples }} as s on s.comparison_id = a.comparison_id and s.k = a.k
inner join (
    -- per question: n samples, |P| playable ones, and the identical ones' summands g(y|c)/g(x_k|c) * 1 summed
    select sq.comparison_id,
        cast(count(*) as double) as n_samples,
        cast(count(*) filter (where not ss.is_true_token) as double) as n_playable,
        coalesce(sum(exp(sq.generator_logprob_y_nats - ss.generator_logprob_x_nats))
            filter (where ss.is_true_token), 0.0) as identical_summands
    from {{ questions }} as sq
    inner join {{ samples }} as ss on ss.comparison_id = sq.comparison_id
    group by sq.comparison_id
) as st on st.comparison_id = a.comparison_id
{%- endmacro %}

{#- Shlegeris et al. 2024, eq. 5 over the answers of each group (`group_by`: a column list), exactly as the study's humans
    (int_pairwise_question_terms, int_pairwise_estimates, mart_pairwise_perplexity 'two_sigma'):
      per question, ln of the mean summand over the group's answers to it;
      L_h - L_G = the mean of those over the group's N questions; sigma = their population sd / sqrt(N);
      L_G = the generator's mean loss -ln g(y|c) on the same questions;
      perplexity = exp(L_G + (L_h - L_G)), the interval exp(L_G + (L_h - L_G) -/+ 2 sigma) (sec. 4.1.3 (1)).
    `terms` is pairwise_answer_terms' output. -#}
{% macro pairwise_group_perplexity(terms, group_by) -%}
with per_question as (
    select {{ group_by }}, comparison_id,
        count(*) as n_answers,
        ln(avg(term)) as log_mean_term_nats,
        any_value(generator_loss_nats) as generator_loss_nats
    from {{ terms }}
    where term is not null  -- an answer on an identical sample that the live game's deal no longer makes
    group by {{ group_by }}, comparison_id
),

per_group as (
    select {{ group_by }},
        count(*) as n_questions,
        cast(sum(n_answers) as bigint) as n_answers,
        avg(log_mean_term_nats) as lh_minus_lg_nats,
        stddev_pop(log_mean_term_nats) / sqrt(count(*)) as sigma_nats,
        avg(generator_loss_nats) as lg_nats
    from per_question
    group by {{ group_by }}
)

select *,
    lg_nats + lh_minus_lg_nats as lh_nats,
    exp(lg_nats + lh_minus_lg_nats) as perplexity,
    exp(lg_nats + lh_minus_lg_nats - 2 * sigma_nats) as perplexity_low,
    exp(lg_nats + lh_minus_lg_nats + 2 * sigma_nats) as perplexity_high
from per_group
{%- endmacro %}

{#- The top-1 game, per answer (Shlegeris et al. 2024, sec. 3): correct when the guess is the true token; and, on the same
    position, each model's most probable next token (its own tokenizer, where a model token starts exactly where
    the question does) and whether it reads as the true token. `answers`: player_id, corpus, doc_id, position,
    guess; `questions`: int_live_top1_questions (the game page: mart_live_top1_questions, the same rows);
    `candidates`: int_live_top1_model_candidates (the game page: mart_live_top1_model_candidates, which publishes
    it). -#}
{% macro top1_answer_outcomes(answers, questions, candidates) -%}
select
    a.*,
    q.true_token,
    a.guess = q.true_token as is_correct,
    c.model_key,
    c.model_top1_token,
    c.is_model_correct
from {{ answers }} as a
inner join {{ questions }} as q on q.corpus = a.corpus and q.doc_id = a.doc_id and q.position = a.position
left join {{ candidates }} as c on c.corpus = a.corpus and c.doc_id = a.doc_id and c.position = a.position
{%- endmacro %}

{#- The study's players a live player is compared with (Shlegeris et al. 2024, Fig. 1): those of `player_accuracy`
    (int_top1_player_accuracy; the game page: mart_top1_player_accuracy, which publishes it) with >= 50 possible
    answers, not excluded, on all possible questions. -#}
{% macro top1_study_players(player_accuracy) -%}
select * from {{ player_accuracy }}
where subset = 'all_possible' and has_min_50_answers and not is_excluded_player
{%- endmacro %}

{#- Per (player, model): the player's top-1 accuracy, the model's on the positions of theirs where it has a
    prediction (and the player's own on those same positions), and where the player stands among the study's
    players (`study_players`: one accuracy per study player; the share with a lower accuracy, ties counting
    half: the mid-rank percentile). `outcomes` is top1_answer_outcomes' output. -#}
{% macro top1_player_summary(outcomes, study_players) -%}
with answers as (
    select player_id, corpus, doc_id, position, any_value(is_correct) as is_correct
    from {{ outcomes }}
    group by all
),

player as (
    select player_id, count(*) as n_answers, count(*) filter (where is_correct) as n_correct,
        avg(cast(is_correct as double)) as accuracy
    from answers
    group by player_id
),

model as (
    select player_id, model_key,
        count(*) as n_model_positions,
        avg(cast(is_model_correct as double)) as model_accuracy,
        avg(cast(is_correct as double)) as accuracy_same_positions
    from {{ outcomes }}
    where model_key is not null
    group by player_id, model_key
),

study as (
    select accuracy from {{ study_players }}
)

select
    p.player_id, p.n_answers, p.n_correct, p.accuracy,
    (select count(*) from study) as n_study_players,
    (select (count(*) filter (where s.accuracy < p.accuracy) + 0.5 * count(*) filter (where s.accuracy = p.accuracy))
        / nullif(count(*), 0) from study as s) as share_of_study_players_below,
    m.model_key, m.n_model_positions, m.model_accuracy, m.accuracy_same_positions
from player as p
left join model as m on m.player_id = p.player_id
{%- endmacro %}
