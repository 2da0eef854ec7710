-- The shape of the surprisal-reading time link, one row per (corpus, measure, run, definition,
-- predictors): int_link_fits' linear and GAM ΔLL over the GAM baseline and the GAM's gain over the linear
-- model (Wilcox et al. 2023's comparison, analysis_link.Rmd), with the corpus's language and the model's name.
-- A row whose fit did not run (var gam off, no Rscript) keeps its status and has no numbers; the curves are in
-- mart_link_curves.
with fits as (
    select * from {{ ref('int_link_fits') }}
),

{{ names_ctes() }}

select
    f.corpus, c.corpus_title, c.language, f.measure, f.model_key,
    coalesce(m.model_name, f.model_key) as model_name, m.model_family, m.n_parameters,
    f.run_id, f.run_source, f.definition, f.predictors, f.status, f.input_sha256, f.n_rows, f.n_words,
    f.n_outlier_words,
    f.linear_delta_loglik_nats_per_word, f.linear_delta_loglik_se_nats_per_word,
    f.linear_delta_loglik_ci_low_nats_per_word, f.linear_delta_loglik_ci_high_nats_per_word,
    f.gam_delta_loglik_nats_per_word, f.gam_delta_loglik_se_nats_per_word,
    f.gam_delta_loglik_ci_low_nats_per_word, f.gam_delta_loglik_ci_high_nats_per_word,
    f.gam_minus_linear_delta_loglik_nats_per_word, f.gam_minus_linear_delta_loglik_se_nats_per_word,
    f.gam_minus_linear_delta_loglik_ci_low_nats_per_word, f.gam_minus_linear_delta_loglik_ci_high_nats_per_word,
    f.gam_minus_linear_p_value, f.gam_surprisal_edf, f.surprisal_p01_bits, f.surprisal_p99_bits
from fits as f
inner join corpora as c using (corpus)
left join model_names as m using (model_key)
order by c.language, f.corpus, f.run_source, f.model_key, f.definition
