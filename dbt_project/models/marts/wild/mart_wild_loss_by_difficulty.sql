-- Loss against difficulty h per domain and condition (Casares et al. 2022, Fig. 5 and its appendix Fig. 3).
-- The data hold the self-assessed loss L_H only; the paper's Fig. 5 plots the externally evaluated
-- L_E, which is not published, so this mart is the appendix's L_H(x, y) vs h view.
-- ci95: mean +/- 1.96 standard errors (normal approximation).
select
    domain,
    difficulty,
    condition,
    count(*) as n_ratings,
    avg(loss) as loss_mean,
    stddev_samp(loss) as loss_sd,
    stddev_samp(loss) / sqrt(count(*)) as loss_se,
    greatest(0.0, avg(loss) - 1.96 * stddev_samp(loss) / sqrt(count(*))) as loss_ci95_low,
    least(1.0, avg(loss) + 1.96 * stddev_samp(loss) / sqrt(count(*))) as loss_ci95_high,
    avg(usefulness_score) as usefulness_score_mean
from {{ ref('int_wild_losses') }}
group by all
