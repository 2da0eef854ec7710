-- Our numbers next to the published ones they reproduce, one row per (study, published table, corpus, measure,
-- predictor, definition, statistic). External rows are never mixed into our marts: they appear only here.
--   Pimentel & Meister 2024 (delta_llh/llh-CORPUS-MODEL.tsv, predictor_type 1): the mean over their 10 folds of
--     the held-out ΔLL per word vs ours (int_pimentel_meister_replication: our cv_means code on their merged
--     inputs). Their folds come from R's RNG: `agrees` = the published value lies within our mean +- 3 sd over
--     var delta_loglik_spread_seeds fold shuffles (tolerance = 3 sd); the seed range is given too.
--   de Varda et al. 2023 (results_linear.csv, df_corr.csv, results_crossval.csv): int_devarda_reproduction.
with pm_published as (
    select corpus, model_key, definition, avg(delta_loglik_nats_per_word) as published, count(*) as n_folds
    from {{ ref('stg_pimentel_meister_delta_llh') }}
    where predictor_type = 1 and predictor like '% + %'  -- the main result (pythia-1.4b's file repeats it unspaced)
    group by all
),

pm as (
    select
        'Pimentel & Meister 2024' as study, 'delta_llh/llh-' || r.corpus || '-' || r.upstream_model || '.tsv' as published_table,
        r.corpus, case when r.corpus = 'natural_stories' then 'spr (their per-word means)'
                       else 'first-pass dwell time (their per-word means)' end as measure,
        r.model_key as predictor, r.definition, 'delta_loglik_nats_per_word' as statistic,
        r.delta_loglik_nats_per_word as ours, p.published,
        abs(r.delta_loglik_nats_per_word - p.published) as abs_difference,
        3 * r.seeds_sd_nats_per_word as tolerance,
        abs(r.seeds_mean_nats_per_word - p.published) <= 3 * r.seeds_sd_nats_per_word as agrees,
        r.n_words as n_rows,
        'ours: seed ' || r.fold_seed || '; over ' || r.spread_seeds || ' shuffles mean ' || round(r.seeds_mean_nats_per_word, 5)
            || ', sd ' || round(r.seeds_sd_nats_per_word, 5) || ', range ' || round(r.seeds_min_nats_per_word, 5) || ' to '
            || round(r.seeds_max_nats_per_word, 5) || ' nats/word' as note
    from {{ ref('int_pimentel_meister_replication') }} as r
    inner join pm_published as p using (corpus, model_key, definition)
),

devarda as (
    select * from {{ ref('int_devarda_reproduction') }}
)

select * from pm
union all by name
select * from devarda
order by study, published_table, corpus, measure, predictor, definition, statistic
