-- Our numbers next to the published ones they reproduce, one row per (study, published table, corpus, measure,
-- predictor, definition, statistic). External rows are never mixed into our marts: they appear only here.
--   Pimentel & Meister 2024 (delta_llh/llh-DATASET-MODEL.tsv, predictor_type 1): the mean over their 10 folds of
--     the held-out ΔLL per word (Hao et al. 2020, sec. 3.2: the log-likelihood a regression of reading times gains from
--     surprisal) for every corpus their files are keyed to: natural_stories and provo, and a user corpus declared
--     with published = 'pimentel_meister:brown' (the ingest loads their Brown files under the user's corpus name;
--     the file name keeps their dataset's). Two comparisons:
--     * their computation replayed (measure '<their measure> (their per-word means)', predictor = model_key):
--       int_pimentel_meister_replication, our cv_means code on their merged inputs with their folds replayed with
--       R's random numbers: `agrees` = the mean and every fold within 1e-9 nats/word; the note gives the largest
--       fold difference and how far other shuffles move the result.
--     * our own pipeline on a corpus a user linked to their dataset (stg_corpora.published; measure = ours:
--       spr for their self-paced reading datasets natural_stories and brown, gaze_duration for provo's first-pass
--       dwell time): int_delta_loglik's cv_means row of every run the marts use on the corpus (predictor = the
--       run: 'pimentel-meister:<model>' for their surprisals, the model_key for a scored run), next to their
--       published mean for the same model (NULL for a model they did not fit, e.g. SmolLM2). Our baseline (length
--       without punctuation, the corpus's Zipf frequency) and folds are not theirs, so agreement is statistical:
--       `agrees` = |ours - theirs| <= 1.96 sqrt(se_ours^2 + se_theirs^2), the standard errors over each side's 10
--       folds (lenient: both use the same words, so the difference varies less than two independent estimates).
--   de Varda et al. 2023 (results_linear.csv, df_corr.csv, results_crossval.csv): int_devarda_reproduction.
with pm_files as (
    -- their file, their dataset and its measures as the adapter read them (ingest/datasets/pimentel_meister.py)
    select *, upstream_table as published_table, upstream_dataset as pm_dataset
    from {{ ref('stg_pimentel_meister_delta_llh') }}
    where predictor_type = 1 and predictor like '% + %'  -- the main result (three files repeat it unspaced)
),

pm_published as (
    select
        corpus, model_key, definition, published_table, pm_dataset, upstream_measure,
        avg(delta_loglik_nats_per_word) as published,
        stddev_samp(delta_loglik_nats_per_word) / sqrt(count(*)) as published_se,
        count(*) as published_folds_n,
        list(delta_loglik_nats_per_word order by fold) as published_folds
    from pm_files
    group by all
),

pm_compared as (
    select
        r.*, p.published, p.published_table, p.pm_dataset, p.upstream_measure,
        (select max(abs(f.o - f.q))
         from (select unnest(r.fold_delta_nats_per_word) as o, unnest(p.published_folds) as q) as f)
            as fold_max_abs_difference
    from {{ ref('int_pimentel_meister_replication') }} as r
    inner join pm_published as p using (corpus, model_key, definition)
),

pm_replicated as (
    select
        'Pimentel & Meister 2024' as study, published_table,
        corpus, upstream_measure || ' (their per-word means)' as measure,
        model_key as predictor, definition, 'delta_loglik_nats_per_word' as statistic,
        delta_loglik_nats_per_word as ours, published,
        abs(delta_loglik_nats_per_word - published) as abs_difference,
        1e-9 as tolerance,
        abs(delta_loglik_nats_per_word - published) <= 1e-9 and fold_max_abs_difference <= 1e-9 as agrees,
        n_words as n_rows,
        'their folds replayed (R set.seed(' || fold_seed || ')); largest fold difference '
            || printf('%.1e', fold_max_abs_difference)
            || '; other shuffles (' || spread_seeds || ' numpy seeds): mean ' || round(seeds_mean_nats_per_word, 5)
            || ', sd ' || round(seeds_sd_nats_per_word, 5) || ', range ' || round(seeds_min_nats_per_word, 5) || ' to '
            || round(seeds_max_nats_per_word, 5) || ' nats/word' as note
    from pm_compared
),

pm_linked as (
    -- the corpora a user linked to one of their datasets, and our measure of that dataset (the adapter's)
    select c.corpus, m.pm_dataset, m.measure
    from {{ ref('stg_corpora') }} as c
    inner join (select distinct pm_dataset, measure from pm_files) as m
        on m.pm_dataset = split_part(c.published, ':', 2)
    where c.published like 'pimentel_meister:%'
),

pm_pipeline as (
    select
        'Pimentel & Meister 2024' as study,
        coalesce(p.published_table, 'delta_llh/llh-' || l.pm_dataset || '-*.tsv') as published_table,
        d.corpus, d.measure,
        case when d.run_source = 'imported_words' then d.run_id else d.model_key end as predictor,
        d.definition, 'delta_loglik_nats_per_word' as statistic,
        -- cv_means only (below): its rows are words, so its nats per row are nats per word
        d.delta_loglik_nats_per_row as ours, p.published,
        abs(d.delta_loglik_nats_per_row - p.published) as abs_difference,
        1.96 * sqrt(d.delta_loglik_se_nats_per_row ^ 2 + p.published_se ^ 2) as tolerance,
        case when p.published is not null then
            abs(d.delta_loglik_nats_per_row - p.published)
                <= 1.96 * sqrt(d.delta_loglik_se_nats_per_row ^ 2 + p.published_se ^ 2)
        end as agrees,
        d.n_words as n_rows,
        'our pipeline (int_delta_loglik cv_means, run ' || d.run_id || ', ' || d.n_folds || ' folds, seed '
            || d.fold_seed || ') on the corpus''s ' || d.measure || ' means; '
            || case when p.published is null then 'they did not fit ' || d.model_key || ' (no published value)'
                    else 'their mean over ' || p.published_folds_n || ' folds, se ' || printf('%.5f', p.published_se)
                         || '; ours se ' || printf('%.5f', d.delta_loglik_se_nats_per_row)
                         || '; tolerance 1.96 sqrt(se_ours^2 + se_theirs^2)' end as note
    from {{ ref('int_delta_loglik') }} as d
    inner join pm_linked as l using (corpus, measure)
    left join pm_published as p
        on p.corpus = d.corpus and p.model_key = d.model_key and p.definition = d.definition
    where d.method = 'cv_means'
),

devarda as (
    select * from {{ ref('int_devarda_reproduction') }}
)

select * from pm_replicated
union all by name
select * from pm_pipeline
union all by name
select * from devarda
order by study, published_table, corpus, measure, predictor, definition, statistic
