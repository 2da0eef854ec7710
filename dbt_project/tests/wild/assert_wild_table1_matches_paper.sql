-- Casares et al. 2022, Table 1: the published mean losses have two decimals, so our means must round to them
-- (|ours - paper| <= 0.005 + float slack). Rows returned = failures. Empty raw tables pass trivially.
select domain, condition, loss_mean, paper_loss_mean
from {{ ref('mart_wild_loss') }}
where paper_loss_mean is not null
  and abs(loss_mean - paper_loss_mean) > 0.005 + 1e-9
