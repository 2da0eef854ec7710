-- The shape of the link between surprisal and reading time (Wilcox et al. 2023's link analysis, mgcv through R): per
-- corpus, the ΔLL x100 of a linear and of a smooth (GAM) surprisal term over the same GAM baseline, and the GAM's gain
-- with its 95% interval (mart_link_shape). Run it on a snapshot:
--   predictabase sql -c "$(cat docs/results/link_table.sql)" --format markdown
-- MECO: gaze duration, their rows (mGPT long context; their freq and len with our models' WT surprisal);
-- the English corpora: our predictors, each corpus's own measure. Cells: linear / GAM [gain, 95% interval].
with d as (
  select corpus_title, corpus, measure, model_key,
         printf('%.2f / %.2f [%+.2f, %+.2f, %+.2f]', 100 * linear_delta_loglik_nats_per_word,
                100 * gam_delta_loglik_nats_per_word, 100 * gam_minus_linear_delta_loglik_nats_per_word,
                100 * gam_minus_linear_delta_loglik_ci_low_nats_per_word,
                100 * gam_minus_linear_delta_loglik_ci_high_nats_per_word) as cell
  from mart_link_shape
  where status = 'ok' and definition in ('as given', 'wt', 'lw')
    and (model_key <> 'gpt2' or definition = 'wt' or corpus = 'ucl'))
select corpus_title as corpus, replace(measure, '_', ' ') as measure,
       coalesce(max(cell) filter (where model_key = 'mgpt-lc'), '—') as "mGPT, long context",
       coalesce(max(cell) filter (where model_key = 'gpt2'), '—') as "GPT-2 small",
       coalesce(max(cell) filter (where model_key = 'smollm2-135m'), '—') as "SmolLM2-135M (WT)",
       coalesce(max(cell) filter (where model_key = 'gemma3-270m'), '—') as "Gemma 3 270M (WT)"
from d group by corpus_title, corpus, measure order by corpus like 'meco%' desc, corpus_title
