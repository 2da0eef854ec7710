-- The top-1 game (Shlegeris et al. 2024, sec. 3): how often humans and models guess the next token, from the
-- published snapshot (mart_top1_summary). Humans pooled over every answer in the analysis; each scored model on
-- exactly the humans' word-token answers (its most probable whole word), beside the humans on those answers.
-- The authors' own reported accuracies are listed on the next table, not mixed in.
select case predictor_kind when 'humans' then 'humans (pooled)' else predictor end as "predictor",
       replace(subset, '_', ' ') as "questions",
       n as "answers",
       printf('%.1f%% [%.1f, %.1f]', 100 * accuracy, 100 * accuracy_ci_low, 100 * accuracy_ci_high) as "top-1 accuracy [95% CI]",
       coalesce(printf('%.1f%%', 100 * human_accuracy_same_questions), '—') as "humans on the same answers",
       coalesce(cast(n_players as varchar), '—') as "players"
from mart_top1_summary
where predictor_kind in ('humans', 'model')
order by predictor_kind = 'model', subset, predictor
