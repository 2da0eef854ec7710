-- Temperature-scaled surprisal: ΔLL of reading times as a function of T, the best T with its interval and the
-- cross-validated gain of choosing it (int_temperature_delta_loglik), published as is.
select * from {{ ref('int_temperature_delta_loglik') }}
order by corpus, measure, model_key, temperature_run_id, temperature
