-- Delta log-likelihood of MECO's eye-tracking means in 11 languages by Wilcox et al. (2023)'s procedure, one row
-- per (corpus, measure, model run, definition, comparison): int_xlang_delta_loglik (their four models on their own
-- rows, the replication; and our scored models on the same words), with the corpus's language and the model's name and
-- size. Our own pipeline's ΔLL of the same corpora (cv_means: our baseline and shuffled folds) is in mart_delta_loglik.
with fits as (
    select * from {{ ref('int_xlang_delta_loglik') }}
),

{{ names_ctes() }}

select
    f.corpus, c.corpus_title, c.language, f.measure, f.model_key,
    coalesce(m.model_name, f.model_key) as model_name, m.model_family, m.n_parameters,
    f.run_id, f.run_source, f.definition, f.comparison, f.method, f.n_words, f.n_folds,
    f.delta_loglik_nats_per_word, f.delta_loglik_se_nats_per_word,
    f.delta_loglik_ci_low_nats_per_word, f.delta_loglik_ci_high_nats_per_word, f.p_value,
    cast(f.fold_delta_nats_per_word as double[]) as fold_delta_nats_per_word
from fits as f
inner join corpora as c using (corpus)
left join model_names as m using (model_key)
order by c.language, f.measure, f.comparison, f.run_source, f.model_key, f.definition
