-- One row per usefulness rating with its loss. Casares et al. 2022, Methodology: "usefulness of the answers is
-- asked to humans through a Likert scale s (1 to 5, from least to most useful), which we convert into
-- loss as L_H = 1 - (s - 1)/4" (self-assessed loss L_H; 0 = completely useful, 1 = useless).
select
    s.respondent_id,
    s.condition,
    s.domain,
    s.instance,
    s.item,
    t.difficulty,
    s.rated,
    s.usefulness_score,
    1.0 - (s.usefulness_score - 1) / 4.0 as loss
from {{ ref('stg_wild_scores') }} as s
inner join {{ ref('stg_wild_tasks') }} as t using (domain, instance)
