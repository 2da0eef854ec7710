-- Delta log-likelihood of reading times (Hao et al. 2020, sec. 3.2), one row per (corpus, measure, run, definition,
-- method): int_delta_loglik_fits (every method's fits with the model's name and size), published as is.
select * from {{ ref('int_delta_loglik_fits') }}
order by corpus, measure, method, model_key, run_id, definition
