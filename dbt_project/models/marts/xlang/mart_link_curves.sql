-- The fitted surprisal-to-reading-time curves, one row per (corpus, measure, run, definition,
-- predictors, curve source, link, surprisal on a 0.1-bit grid from 0 to 20 bits): the effect of the word's
-- surprisal on its reading time relative to 0 bits, with a 95 % band.
--   ours (int_link_fits): from one mgcv fit on all of the set's words, band = effect ± 1.96 SE (the model's
--     Bayesian covariance of the surprisal term, for the difference from 0 bits);
--   published (Wilcox et al. 2023's gam_saves, stg_wilcox_xlang_link_curves): their curves as saved, band = the
--     2.5 and 97.5 % quantiles over 10 bootstrap refits; their script fits these on the rows of all four models
--     of a language together (it never filters on the model), so the four models' curves differ only by the
--     bootstrap's draws.
-- in_data_range: the grid point lies between the 1st and 99th percentile of the set's surprisal (ours; their
-- curves: of the same model's rows in our fit), where the curve rests on words rather than on the basis.
with fits as (
    select * from {{ ref('int_link_fits') }} where status = 'ok'
),

ours as (
    select
        corpus, measure, model_key, run_id, run_source, definition, predictors,
        surprisal_p01_bits, surprisal_p99_bits,
        unnest(curve_surprisal_bits) as surprisal_bits,
        unnest(linear_effect_ms) as linear_ms, unnest(linear_effect_se_ms) as linear_se_ms,
        unnest(gam_effect_ms) as gam_ms, unnest(gam_effect_se_ms) as gam_se_ms
    from fits
),

ours_long as (
    select corpus, measure, model_key, run_id, run_source, definition, predictors, 'ours' as curve_source,
           'linear' as link, surprisal_bits, linear_ms as effect_ms,
           linear_ms - 1.96 * linear_se_ms as effect_low_ms, linear_ms + 1.96 * linear_se_ms as effect_high_ms,
           surprisal_bits between surprisal_p01_bits and surprisal_p99_bits as in_data_range
    from ours
    union all
    select corpus, measure, model_key, run_id, run_source, definition, predictors, 'ours', 'gam', surprisal_bits,
           gam_ms, gam_ms - 1.96 * gam_se_ms, gam_ms + 1.96 * gam_se_ms,
           surprisal_bits between surprisal_p01_bits and surprisal_p99_bits
    from ours
),

published as (
    select
        p.corpus, p.measure, p.model_key, 'wilcox-xlang:' || p.model_key as run_id,
        'imported_words' as run_source, 'as given' as definition, 'wilcox_2023' as predictors,
        'published' as curve_source, p.link, round(p.surprisal_bits, 1) as surprisal_bits, p.effect_ms,
        p.effect_low_ms, p.effect_high_ms,
        round(p.surprisal_bits, 1) between f.surprisal_p01_bits and f.surprisal_p99_bits as in_data_range
    from {{ ref('stg_wilcox_xlang_link_curves') }} as p
    left join fits as f
        on f.corpus = p.corpus and f.measure = p.measure and f.run_id = 'wilcox-xlang:' || p.model_key
        and f.predictors = 'wilcox_2023'
),

{{ names_ctes() }}

select
    u.corpus, c.corpus_title, c.language, u.measure, u.model_key,
    coalesce(m.model_name, u.model_key) as model_name, u.run_id, u.run_source, u.definition, u.predictors,
    u.curve_source, u.link, cast(u.surprisal_bits as double) as surprisal_bits, u.effect_ms, u.effect_low_ms,
    u.effect_high_ms, u.in_data_range
from (
    select * from ours_long
    union all
    select * from published
) as u
inner join corpora as c using (corpus)
left join model_names as m using (model_key)
order by u.corpus, u.run_id, u.definition, u.predictors, u.curve_source, u.link, u.surprisal_bits
