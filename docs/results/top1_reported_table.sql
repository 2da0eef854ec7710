-- The models' top-1 accuracies as the LM-game authors report them (their own sample of questions; mart_top1_summary's
-- reference rows), one row per model and subset, the values of their results files side by side.
select predictor as "model (authors' results)", replace(subset, '_', ' ') as "questions",
       string_agg(distinct printf('%.1f%%', 100 * accuracy), ', ' order by printf('%.1f%%', 100 * accuracy)) as "top-1 accuracy reported"
from mart_top1_summary
where predictor_kind = 'reference'
group by predictor, subset
order by subset, max(accuracy)
