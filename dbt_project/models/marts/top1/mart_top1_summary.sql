-- Top-1 accuracy per predictor and subset (Shlegeris et al. 2024, section 3), humans and models on the same questions.
--
-- Humans: every answer in analysis (int_top1_guesses.in_analysis: impossible questions, rows past the
-- document's end and the accounts of seed top1_excluded_players out), pooled; plus the mean of the
-- per-player accuracies among players with >= 50 answers (all possible questions) and their count.
-- Models: each human answer of the subset is paired with the model's prediction for the same question,
-- so a model's n counts exactly the human answers of its row (n_without_prediction: answers whose
-- question the model could not answer: no token boundary at the question, or no choice-set word found);
-- `human_accuracy_same_questions` is the humans' accuracy on exactly those answers. Word-level models
-- (comparison word_top1) are compared on the word-token subset only. References: the authors' reported
-- accuracies (raw model_perfs*.json, subset per seed top1_reference_files), labelled, never measured here.
-- Intervals: Wilson score, 95% (z = 1.959964), treating answers as independent.
with answers as (
    select * from {{ ref('int_top1_guesses') }}
    where in_analysis
),

subsets as (
    select 'all_possible' as subset
    union all
    select 'word_tokens'
),

subset_answers as (
    select a.*, s.subset
    from answers as a
    inner join subsets as s on s.subset = 'all_possible' or a.is_word_token
),

players as (
    select player_id, subset, count(*) as answers, avg(cast(is_correct as int)) as accuracy
    from subset_answers
    group by player_id, subset
),

player_totals as (
    select player_id, count(*) as answers_all_possible from answers group by player_id
),

humans as (
    select
        'humans' as predictor_kind, 'humans (pooled)' as predictor, 'human_guess' as comparison, a.subset,
        count(*) as n, count(*) filter (where a.is_correct) as n_correct,
        count(distinct a.player_id) as n_players,
        count(distinct a.player_id) filter (where t.answers_all_possible >= 50) as n_players_min_50,
        avg(cast(a.is_correct as int)) filter (where t.answers_all_possible >= 50) as pooled_accuracy_min_50,
        cast(null as double) as human_accuracy_same_questions,
        cast(null as bigint) as n_without_prediction,
        cast(null as double) as share_argmax_proven,
        cast(null as double) as share_proven_by_mass,
        cast(null as varchar) as reference_file,
        cast(null as varchar) as reference_note
    from subset_answers as a
    inner join player_totals as t using (player_id)
    group by a.subset
),

human_player_means as (
    select p.subset, avg(p.accuracy) as mean_player_accuracy_min_50
    from players as p
    inner join player_totals as t using (player_id)
    where t.answers_all_possible >= 50
    group by p.subset
),

predictions as (
    select * from {{ ref('int_top1_model_predictions') }}
),

model_subsets as (
    -- word-level predictions exist on word-token questions only: that subset alone
    select distinct p.model_key, p.comparison, s.subset
    from predictions as p
    cross join subsets as s
    where p.comparison = 'exact_token' or s.subset = 'word_tokens'
),

models as (
    select
        'model' as predictor_kind, m.model_key as predictor, m.comparison, m.subset,
        count(*) filter (where p.has_prediction) as n,
        count(*) filter (where p.is_correct) as n_correct,
        cast(null as bigint) as n_players,
        cast(null as bigint) as n_players_min_50,
        cast(null as double) as pooled_accuracy_min_50,
        avg(cast(a.is_correct as int)) filter (where p.has_prediction) as human_accuracy_same_questions,
        count(*) filter (where not coalesce(p.has_prediction, false)) as n_without_prediction,
        avg(cast(p.argmax_proven as int)) filter (where p.has_prediction) as share_argmax_proven,
        avg(cast(p.proven_by_mass as int)) filter (where p.has_prediction) as share_proven_by_mass,
        cast(null as varchar) as reference_file,
        cast(null as varchar) as reference_note
    from model_subsets as m
    inner join subset_answers as a on a.subset = m.subset
    left join predictions as p
        on p.model_key = m.model_key and p.doc_id = a.doc_id and p.position = a.position
    group by m.model_key, m.comparison, m.subset
),

reported as (
    select
        'reference' as predictor_kind, r.model_name as predictor, 'authors_reported' as comparison, f.subset,
        cast(null as bigint) as n, cast(null as bigint) as n_correct,
        cast(null as bigint) as n_players, cast(null as bigint) as n_players_min_50,
        cast(null as double) as pooled_accuracy_min_50, cast(null as double) as human_accuracy_same_questions,
        cast(null as bigint) as n_without_prediction,
        cast(null as double) as share_argmax_proven, cast(null as double) as share_proven_by_mass,
        r.reference_file, f.note as reference_note,
        r.accuracy as reported_accuracy
    from {{ ref('stg_top1_reference_accuracies') }} as r
    inner join {{ ref('top1_reference_files') }} as f on f.reference_file = r.reference_file
),

measured as (
    select h.*, pm.mean_player_accuracy_min_50
    from humans as h
    left join human_player_means as pm using (subset)
    union all by name
    select * from models
),

with_intervals as (
    select
        *,
        n_correct / n as accuracy,
        -- Wilson score interval
        (n_correct / n + 1.959964 ^ 2 / (2 * n)) / (1 + 1.959964 ^ 2 / n) as center,
        1.959964 * sqrt((n_correct / n) * (1 - n_correct / n) / n + 1.959964 ^ 2 / (4 * n ^ 2))
            / (1 + 1.959964 ^ 2 / n) as half_width
    from measured
    where n > 0
)

select
    predictor_kind, predictor, comparison, subset, n, n_correct, accuracy,
    center - half_width as accuracy_ci_low, center + half_width as accuracy_ci_high,
    n_players, n_players_min_50, mean_player_accuracy_min_50, pooled_accuracy_min_50,
    human_accuracy_same_questions, n_without_prediction, share_argmax_proven, share_proven_by_mass,
    reference_file, reference_note
from with_intervals
union all by name
select
    predictor_kind, predictor, comparison, subset, n, n_correct, reported_accuracy as accuracy,
    cast(null as double) as accuracy_ci_low, cast(null as double) as accuracy_ci_high,
    n_players, n_players_min_50, cast(null as double) as mean_player_accuracy_min_50, pooled_accuracy_min_50,
    human_accuracy_same_questions, n_without_prediction, share_argmax_proven, share_proven_by_mass,
    reference_file, reference_note
from reported
