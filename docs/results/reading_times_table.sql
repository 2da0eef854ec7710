-- ΔLL of reading times (cv_means: OLS on per-word means, 10 seeded folds of words, held-out log-likelihood per word;
-- 95% t interval over folds; exact sign-flip p over the folds, whose floor is 2/1024), x10⁻² nats per word, WT and
-- LW surprisal, and PNC (Pearson r with cloze surprisal; Natural Stories has no cloze norms), per corpus, measure
-- and model (mart_delta_loglik, mart_pnc). Run it on a snapshot:
--   predictabase sql -c "$(cat docs/results/reading_times_table.sql)" --format markdown
with d as (
  select corpus, measure, model_key, model_name, n_parameters, definition,
         printf('%.2f [%.2f, %.2f]', 100*delta_loglik_nats_per_row, 100*delta_loglik_ci_low_nats_per_row, 100*delta_loglik_ci_high_nats_per_row)
         || case when p_value < 0.002 then ' p<.002' else printf(' p=%.3f', p_value) end as cell
  from mart_delta_loglik where method = 'cv_means' and status = 'ok'),
p as (select corpus, model_key, definition, printf('%.3f', pnc_pearson_r) as pnc from mart_pnc),
w as (
  select corpus, measure, model_key, any_value(model_name) model_name, any_value(n_parameters) n_parameters,
         max(cell) filter (where definition = 'wt') wt, max(cell) filter (where definition = 'lw') lw
  from d group by all)
select case w.corpus when 'natural_stories' then 'Natural Stories' when 'provo' then 'Provo' else 'UCL' end as "corpus",
       replace(w.measure, '_', ' ') as "measure", model_name as "model",
       coalesce(wt, '—') as "ΔLL WT ×10⁻² nats/word [95% CI] p", coalesce(lw, '—') as "ΔLL LW ×10⁻² nats/word [95% CI] p",
       coalesce(pw.pnc, '—') as "PNC WT", coalesce(pl.pnc, '—') as "PNC LW"
from w
left join p pw on pw.corpus = w.corpus and pw.model_key = w.model_key and pw.definition = 'wt'
left join p pl on pl.corpus = w.corpus and pl.model_key = w.model_key and pl.definition = 'lw'
order by case w.corpus when 'natural_stories' then 1 when 'provo' then 2 else 3 end,
         case w.measure when 'spr' then 0 when 'first_fixation' then 1 when 'gaze_duration' then 2 when 'go_past' then 3 else 4 end,
         n_parameters nulls last, model
