-- C_H and C_H,M per domain, Casares et al. 2022, Eqs. (2) and (3), for n = the task's instances (3):
--   C_H(n)   = n * [ L_H(human) + beta * G_H ]                                         (Eq. 2)
--   C_H,M(n) = alpha * D_H + n * [ L_H(GPT-3) + gamma * (W_H + U_H) + delta * V_H ]    (Eq. 3)
-- Devising D_H is paid once per task (the first instance), wrapping W_H, unwrapping U_H and validation
-- V_H on every instance (Methodology). Effort terms are the Fig. 4 medians (mart_wild_effort), losses
-- the Table 1 means (mean L_H per domain and condition). Weights are dbt vars (default 1):
-- wild_alpha, wild_beta, wild_gamma, wild_delta; with all weights 1 the cost adds loss (unitless,
-- <= 1 per instance) to seconds, so it is dominated by the effort; effort_*_s give the time alone.
{% set alpha = var('wild_alpha', 1) %}{% set beta = var('wild_beta', 1) %}
{% set gamma = var('wild_gamma', 1) %}{% set delta = var('wild_delta', 1) %}
with eff as (
    select domain, domain_order, {{ pivot_columns('max', 'component', 'median_s', {
        'devising': 'd_h_s', 'wrapping': 'w_h_s', 'unwrapping': 'u_h_s', 'validating': 'v_h_s', 'solving': 'g_h_s'}) }}
    from {{ ref('int_wild_effort') }}
    group by all
),

loss as (
    select domain, {{ pivot_columns('avg', 'condition', 'loss', {
        'with_model': 'loss_with_model', 'without_model': 'loss_without_model'}) }},
        count(distinct instance) as n_instances
    from {{ ref('int_wild_losses') }}
    group by all
),

w as (
    select cast({{ alpha }} as double) as alpha, cast({{ beta }} as double) as beta,
           cast({{ gamma }} as double) as gamma, cast({{ delta }} as double) as delta
)

select
    eff.domain,
    eff.domain_order,
    loss.n_instances,
    loss.loss_with_model,
    loss.loss_without_model,
    eff.d_h_s, eff.w_h_s, eff.u_h_s, eff.v_h_s, eff.g_h_s,
    w.alpha, w.beta, w.gamma, w.delta,
    loss.n_instances * eff.g_h_s as effort_h_s,
    eff.d_h_s + loss.n_instances * (eff.w_h_s + eff.u_h_s + eff.v_h_s) as effort_h_m_s,
    loss.n_instances * (loss.loss_without_model + w.beta * eff.g_h_s) as c_h,
    w.alpha * eff.d_h_s
        + loss.n_instances * (loss.loss_with_model + w.gamma * (eff.w_h_s + eff.u_h_s) + w.delta * eff.v_h_s) as c_h_m,
    w.alpha * eff.d_h_s
        + loss.n_instances * (loss.loss_with_model + w.gamma * (eff.w_h_s + eff.u_h_s) + w.delta * eff.v_h_s)
        - loss.n_instances * (loss.loss_without_model + w.beta * eff.g_h_s) as gain_c_h_m_minus_c_h
from eff
inner join loss using (domain)
cross join w
