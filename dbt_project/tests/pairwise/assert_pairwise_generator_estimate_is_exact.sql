-- The generator playing itself with exact ratios: every equation-4 summand is 1, so
-- L_h - L_G = 0 exactly and its estimated perplexity equals its true one (Shlegeris et al. 2024, sec. 4.2).
select *
from {{ ref('mart_pairwise_perplexity') }}
where is_generator and rounding = 'exact'
  and (lh_minus_lg_nats <> 0 or abs(perplexity - true_perplexity) > 1e-9 * true_perplexity)
