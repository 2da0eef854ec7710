-- Prompts in the wild (Casares et al. 2022, Fig. 4): the median time of each effort term per domain, seconds
-- (mart_wild_effort; D_H is derived: the first instance's prompting time less W_H).
select domain as "domain",
       max(median_s) filter (where cost_term = 'D_H') as "D_H devising",
       max(median_s) filter (where cost_term = 'W_H') as "W_H wrapping",
       max(median_s) filter (where cost_term = 'U_H') as "U_H unwrapping",
       max(median_s) filter (where cost_term = 'V_H') as "V_H validating",
       max(median_s) filter (where cost_term = 'G_H') as "G_H solving"
from mart_wild_effort
group by domain, domain_order
order by domain_order
