-- Per (measure, comparison, model, definition): over MECO's languages, how many of mart_xlang_delta_loglik's 95%
-- intervals lie above 0 and below 0, and the mean ΔLL over the languages (nats per word, each language weighted
-- alike): what the Languages page's sentences say.
select
    measure, comparison, model_key, any_value(model_name) as model_name, run_source, definition,
    count(*) as n_languages,
    count(*) filter (where delta_loglik_ci_low_nats_per_word > 0) as n_above_zero,
    count(*) filter (where delta_loglik_ci_high_nats_per_word < 0) as n_below_zero,
    avg(delta_loglik_nats_per_word) as mean_delta_loglik_nats_per_word
from {{ ref('mart_xlang_delta_loglik') }}
group by measure, comparison, model_key, run_source, definition
order by measure, comparison, model_key, definition
