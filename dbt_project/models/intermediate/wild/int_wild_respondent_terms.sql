-- One row per (respondent, domain): the respondent's own estimate of every effort term (seconds) and
-- their mean loss over the domain's three instances. Casares et al. 2022, Methodology: "the first instance of
-- each task has a prompting cost (measured in time) of D_H + W_H, while for the second and third
-- instances the cost is only W_H"; so per respondent W_H = mean prompting time of instances 2-3 and
-- D_H = prompting time of instance 1 - W_H. U_H, V_H, G_H: mean over the three instances.
-- Columns of the other condition are NULL. Used for the Spearman correlations (Fig. 3).
with e as (
    select respondent_id, condition, domain,
        {{- pivot_columns('max', 'component', 'time_s', {'prompting': 'prompting_first_s'}, 'instance = 1') }},
        {{- pivot_columns('avg', 'component', 'time_s', {'prompting': 'wrapping_s'}, 'instance > 1') }},
        {{- pivot_columns('avg', 'component', 'time_s', {'unwrapping': 'unwrapping_s', 'validating': 'validating_s',
                                                          'solving': 'solving_s', 'self_rating': 'self_rating_s'}) }}
    from {{ ref('stg_wild_efforts') }}
    group by all
),

l as (
    select respondent_id, domain, avg(loss) as loss_mean, count(*) as n_ratings
    from {{ ref('int_wild_losses') }}
    group by all
)

select
    e.respondent_id,
    e.condition,
    e.domain,
    e.prompting_first_s,
    e.prompting_first_s - e.wrapping_s as devising_s,
    e.wrapping_s,
    e.unwrapping_s,
    e.validating_s,
    e.solving_s,
    e.self_rating_s,
    l.loss_mean,
    l.n_ratings
from e
left join l using (respondent_id, domain)
