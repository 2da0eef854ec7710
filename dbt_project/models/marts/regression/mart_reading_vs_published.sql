-- Our numbers next to the published ones they reproduce, one row per (study, published table, corpus, measure,
-- predictor, definition, statistic). External rows are never mixed into our marts: they appear only here.
--   Pimentel & Meister 2024 (delta_llh/llh-CORPUS-MODEL.tsv, predictor_type 1): the mean over their 10 folds of
--     the held-out ΔLL per word vs ours (int_pimentel_meister_replication: our cv_means code on their merged
--     inputs, their folds replayed with R's random numbers): `agrees` = the mean and every fold within 1e-9
--     nats/word; the note gives the largest fold difference and how far other shuffles move the result.
--   de Varda et al. 2023 (results_linear.csv, df_corr.csv, results_crossval.csv): int_devarda_reproduction.
with pm_published as (
    select corpus, model_key, definition, avg(delta_loglik_nats_per_word) as published,
           list(delta_loglik_nats_per_word order by fold) as published_folds
    from {{ ref('stg_pimentel_meister_delta_llh') }}
    where predictor_type = 1 and predictor like '% + %'  -- the main result (three files repeat it unspaced)
    group by all
),

pm_compared as (
    select
        r.*, p.published,
        (select max(abs(o - q)) from (select unnest(r.fold_delta_nats_per_word) as o, unnest(p.published_folds) as q))
            as fold_max_abs_difference
    from {{ ref('int_pimentel_meister_replication') }} as r
    inner join pm_published as p using (corpus, model_key, definition)
),

pm as (
    select
        'Pimentel & Meister 2024' as study, 'delta_llh/llh-' || corpus || '-' || upstream_model || '.tsv' as published_table,
        corpus, case when corpus = 'natural_stories' then 'spr (their per-word means)'
                     else 'first-pass dwell time (their per-word means)' end as measure,
        model_key as predictor, definition, 'delta_loglik_nats_per_word' as statistic,
        delta_loglik_nats_per_word as ours, published,
        abs(delta_loglik_nats_per_word - published) as abs_difference,
        1e-9 as tolerance,
        abs(delta_loglik_nats_per_word - published) <= 1e-9 and fold_max_abs_difference <= 1e-9 as agrees,
        n_words as n_rows,
        'their folds replayed (R set.seed(' || fold_seed || ')); largest fold difference ' || printf('%.1e', fold_max_abs_difference)
            || '; other shuffles (' || spread_seeds || ' numpy seeds): mean ' || round(seeds_mean_nats_per_word, 5)
            || ', sd ' || round(seeds_sd_nats_per_word, 5) || ', range ' || round(seeds_min_nats_per_word, 5) || ' to '
            || round(seeds_max_nats_per_word, 5) || ' nats/word' as note
    from pm_compared
),

devarda as (
    select * from {{ ref('int_devarda_reproduction') }}
)

select * from pm
union all by name
select * from devarda
order by study, published_table, corpus, measure, predictor, definition, statistic
