-- ΔLL x100 (gaze duration) per MECO language, Wilcox et al. 2023's procedure replayed (mart_xlang_delta_loglik). Run it
-- on a snapshot: predictabase sql -c "$(cat docs/results/xlang_table.sql)" --format markdown
-- Theirs: their four models on their own rows (the replication); ours: the WT surprisal of our scored models on the
-- same words (our LW in mart_xlang_delta_loglik too). Cells: ΔLL x10⁻² nats per word [mean ± 1.96 SE].
with d as (
  select corpus_title, language, model_key, definition,
         printf('%.2f [%.2f, %.2f]', 100 * delta_loglik_nats_per_word, 100 * delta_loglik_ci_low_nats_per_word,
                100 * delta_loglik_ci_high_nats_per_word) as cell
  from mart_xlang_delta_loglik
  where measure = 'gaze_duration' and comparison = 'surprisal' and definition in ('as given', 'wt'))
select corpus_title as "language (MECO)",
       coalesce(max(cell) filter (where model_key = 'mgpt-sc'), '—') as "mGPT, short context",
       coalesce(max(cell) filter (where model_key = 'mgpt-lc'), '—') as "mGPT, long context",
       coalesce(max(cell) filter (where model_key = 'monot-30m'), '—') as "monolingual, 30M words",
       coalesce(max(cell) filter (where model_key = 'monot-all'), '—') as "monolingual, all data",
       coalesce(max(cell) filter (where model_key = 'smollm2-135m'), '—') as "SmolLM2-135M (WT)",
       coalesce(max(cell) filter (where model_key = 'gemma3-270m'), '—') as "Gemma 3 270M (WT)"
from d group by corpus_title, language order by corpus_title
