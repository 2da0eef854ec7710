-- Per (corpus, measure, word): the mean reading time over the readers kept by int_reading_observations (a
-- skipped reader has no row, so never counts as 0 ms) - the dependent variable of the `cv_means` regressions.
select
    corpus, measure, doc_id, word_index,
    avg(rt_ms) as mean_rt_ms,
    count(*) as n_observations
from {{ ref('int_reading_observations') }}
group by corpus, measure, doc_id, word_index
