-- Anticipation (mart_anticipation_delta_loglik): what a word's entropy adds to its surprisal, or does in its place,
-- in the regression of per-word mean reading times. Run it on a snapshot:
--   predictabase sql -c "$(cat docs/results/anticipation_table.sql)" --format markdown
-- Cells: ΔLL x10⁻² nats per word [95% interval over words].
with a as (
  select corpus, measure, model_key, n_samples, n_words, comparison,
         printf('%.2f [%.2f, %.2f]', 100 * delta_loglik_nats_per_word, 100 * delta_loglik_ci_low_nats_per_word,
                100 * delta_loglik_ci_high_nats_per_word) as cell
  from mart_anticipation_delta_loglik)
select c.title as corpus, a.measure as "reading measure", a.model_key as model, a.n_samples as "samples a word",
       max(a.n_words) as words,
       max(cell) filter (where comparison = 'surprisal') as "surprisal",
       max(cell) filter (where comparison = 'first_token_added') as "+ first-token entropy",
       max(cell) filter (where comparison = 'mc_added') as "+ word entropy (MC)",
       max(cell) filter (where comparison = 'renyi_added') as "+ Rényi entropy",
       max(cell) filter (where comparison = 'mc_vs_first_token') as "word vs first-token entropy",
       max(cell) filter (where comparison = 'mc_replaces') as "word entropy in place of surprisal"
from a join mart_corpora c using (corpus)
group by all order by 1, 2, 3
