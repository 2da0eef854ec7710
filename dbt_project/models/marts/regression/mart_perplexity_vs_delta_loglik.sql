-- Hao et al. 2020, Figure 1: per (corpus, measure, run, definition), the model's word-level perplexity over exactly the
-- words of its cv_means regression, exp(sum of the words' surprisal / number of words) (the perplexity glossary:
-- corpus-weighted, one exponent over all words), next to its delta log-likelihood, PNC where the corpus has cloze
-- norms, and the model's family and size (the model table, stg_model_table): the model-size pattern across the Pythia
-- and GPT-2 families (Oh & Schuler 2023; Pimentel & Meister 2024).
with fits as (
    select * from {{ ref('int_delta_loglik_fits') }}
    where method = 'cv_means' and status = 'ok'
),

pnc as (
    select corpus, run_id, definition, pnc_pearson_r from {{ ref('int_pnc') }}
)

select
    f.corpus, f.measure, f.model_key, f.model_name, f.model_family, f.n_parameters, f.run_id, f.run_source,
    f.definition, f.n_words,
    exp(f.sum_surprisal_nats / f.n_words) as word_perplexity,
    f.sum_surprisal_nats / f.n_words / ln(2) as mean_surprisal_bits,
    -- cv_means only (above): its rows are words, so its nats per row are nats per word
    f.delta_loglik_nats_per_row as delta_loglik_nats_per_word,
    f.delta_loglik_ci_low_nats_per_row as delta_loglik_ci_low_nats_per_word,
    f.delta_loglik_ci_high_nats_per_row as delta_loglik_ci_high_nats_per_word,
    p.pnc_pearson_r
from fits as f
left join pnc as p using (corpus, run_id, definition)
order by f.corpus, f.measure, f.definition, f.n_parameters
