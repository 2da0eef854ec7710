-- Our own pipeline's ΔLL x100 (cv_means: per-word means, our baseline of wordfreq frequency and length of the word and
-- the three before, shuffled folds; mart_delta_loglik) on MECO's gaze durations. Run it on a snapshot:
--   predictabase sql -c "$(cat docs/results/xlang_cv_means_table.sql)" --format markdown
-- Cells: ΔLL x10⁻² nats per word [95% interval over folds]; ours WT, Wilcox et al.'s as given.
with d as (
  select corpus, model_key,
         printf('%.2f [%.2f, %.2f]', 100 * delta_loglik_nats_per_row, 100 * delta_loglik_ci_low_nats_per_row,
                100 * delta_loglik_ci_high_nats_per_row) as cell
  from mart_delta_loglik
  where corpus like 'meco\_%' escape '\' and measure = 'gaze_duration' and method = 'cv_means' and status = 'ok'
    and (run_source <> 'scored' or definition = 'wt'))
select c.title as "language (MECO)",
       coalesce(max(cell) filter (where model_key = 'mgpt-sc'), '—') as "mGPT, short context",
       coalesce(max(cell) filter (where model_key = 'mgpt-lc'), '—') as "mGPT, long context",
       coalesce(max(cell) filter (where model_key = 'monot-30m'), '—') as "monolingual, 30M words",
       coalesce(max(cell) filter (where model_key = 'monot-all'), '—') as "monolingual, all data",
       coalesce(max(cell) filter (where model_key = 'smollm2-135m'), '—') as "SmolLM2-135M (WT)",
       coalesce(max(cell) filter (where model_key = 'gemma3-270m'), '—') as "Gemma 3 270M (WT)"
from d join mart_corpora c using (corpus) group by c.title order by c.title
