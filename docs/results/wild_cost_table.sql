-- Prompts in the wild (Casares et al. 2022, eqs. 2-3): the cost of doing three instances by hand, C_H, and with
-- GPT-3, C_H,M, per domain, and the gain C_H,M − C_H (negative: GPT-3 is cheaper), with the weights the build used
-- (mart_wild_cost).
select domain as "domain", n_instances as "instances",
       printf('%.1f', c_h) as "C_H", printf('%.1f', c_h_m) as "C_H,M", printf('%+.1f', gain_c_h_m_minus_c_h) as "C_H,M − C_H",
       printf('α %g, β %g, γ %g, δ %g', alpha, beta, gamma, delta) as "weights"
from mart_wild_cost
order by domain_order
