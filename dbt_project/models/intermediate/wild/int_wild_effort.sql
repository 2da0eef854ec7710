-- Figure 4 of Casares et al. 2022: median effort (seconds) per component, domain and condition.
-- Methodology: "For the different effort components we use the median of the measured time" and
-- "the first instance of each task has a prompting cost of D_H + W_H, while for the second and
-- third instances the cost is only W_H". Hence, per domain:
--   W_H = median prompting time over instances 2-3 (all respondents of group A),
--   D_H = median prompting time of instance 1 (the measured D_H + W_H) - W_H   (is_derived),
--   U_H, V_H = medians of the unwrapping / rating times over all three instances,
--   G_H = median solving time of group B; self_rating = group B's time to rate its own answer
--   (measured, not a term of Eq. 2).
-- NULL times (a few missing self-rating times upstream) are left out of the medians.
with e as (
    select * from {{ ref('stg_wild_efforts') }} where time_s is not null
),

measured as (
    select domain, condition,
        case when component = 'prompting' and instance = 1 then 'prompting_first_instance'
             when component = 'prompting' then 'wrapping'
             else component end as component,
        median(time_s) as median_s,
        avg(time_s) as mean_s,
        count(*) as n_measurements,
        count(distinct respondent_id) as n_respondents
    from e
    group by all
),

devising as (
    select f.domain, f.condition, 'devising' as component,
        f.median_s - w.median_s as median_s,
        f.mean_s - w.mean_s as mean_s,
        f.n_measurements, f.n_respondents
    from measured as f
    inner join measured as w on w.domain = f.domain and w.condition = f.condition and w.component = 'wrapping'
    where f.component = 'prompting_first_instance'
),

unioned as (
    select *, false as is_derived from measured
    union all
    select *, true as is_derived from devising
)

select
    u.domain,
    u.condition,
    u.component,
    c.cost_term,
    u.median_s,
    u.mean_s,
    u.n_measurements,
    u.n_respondents,
    u.is_derived,
    c.in_figure4,
    c.component_order,
    t.task_index as domain_order
from unioned as u
-- the cost term of Eq. 2/3, stacking order and Fig. 4 membership of each component: seed wild_effort_components
left join {{ ref('wild_effort_components') }} as c using (component)
inner join (select distinct domain, task_index from {{ ref('stg_wild_tasks') }}) as t using (domain)
