-- Temperature-scaled surprisal (mart_temperature_delta_loglik): the temperature T at which word surprisal under
-- softmax(logits / T) best predicts reading times, and what choosing T gains over the model's own distribution.
-- Run it on a snapshot:
--   predictabase sql -c "$(cat docs/results/temperature_table.sql)" --format markdown
-- ΔLL x10⁻² nats per word [95% interval over words]; best T [95% bootstrap interval over words].
select c.title as corpus, t.measure as "reading measure", t.model_key as model, t.n_words as words,
       printf('%.2f [%.2f, %.2f]', 100 * max(t.delta_loglik_nats_per_word) filter (where t.temperature = 1),
              100 * max(t.delta_loglik_ci_low_nats_per_word) filter (where t.temperature = 1),
              100 * max(t.delta_loglik_ci_high_nats_per_word) filter (where t.temperature = 1)) as "ΔLL at T = 1",
       printf('%g [%g, %g]', t.best_temperature, t.best_temperature_ci_low, t.best_temperature_ci_high) as "best T",
       printf('%.2f [%.2f, %.2f]', 100 * max(t.delta_loglik_nats_per_word) filter (where t.is_best),
              100 * max(t.delta_loglik_ci_low_nats_per_word) filter (where t.is_best),
              100 * max(t.delta_loglik_ci_high_nats_per_word) filter (where t.is_best)) as "ΔLL at the best T",
       printf('%+.2f [%.2f, %.2f]', 100 * t.cv_gain_nats_per_word, 100 * t.cv_gain_ci_low_nats_per_word,
              100 * t.cv_gain_ci_high_nats_per_word) as "gain of choosing T (cross-validated)"
from mart_temperature_delta_loglik as t join mart_corpora as c using (corpus)
group by c.title, t.corpus, t.measure, t.model_key, t.n_words, t.best_temperature, t.best_temperature_ci_low,
         t.best_temperature_ci_high, t.cv_gain_nats_per_word, t.cv_gain_ci_low_nats_per_word,
         t.cv_gain_ci_high_nats_per_word
order by 1, 2, 3
