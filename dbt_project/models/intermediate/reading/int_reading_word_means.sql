-- Per (corpus, measure, word): the mean reading time the `cv_means` regressions model (int_delta_loglik).
--   readers: the mean over the readers kept by int_reading_observations (a skipped reader has no row, so never
--     counts as 0 ms); n_observations = those readers.
--   user_means: a user corpus whose file holds per-word means (stg_reading_times rows without a reader_id)
--     enters as given (rt_ms > 0; a skipped word has no row); n_observations = the readers the file gives for
--     the mean (NULL where it gives none). Where a user corpus has per-reader rows for the measure too, the
--     mean over its readers is used and the file's means are not (one value per word).
with observed as (
    select
        corpus, measure, doc_id, word_index,
        avg(rt_ms) as mean_rt_ms,
        count(*) as n_observations,
        'readers' as mean_source
    from {{ ref('int_reading_observations') }}
    group by corpus, measure, doc_id, word_index
),

observed_measures as (
    select distinct corpus, measure from observed
),

user_means as (
    select
        u.corpus, u.measure, u.doc_id, u.word_index,
        u.rt_ms as mean_rt_ms,
        cast(u.n_readers as bigint) as n_observations,
        'user_means' as mean_source
    from {{ ref('stg_reading_times') }} as u
    inner join {{ ref('int_reading_words') }} as w using (corpus, doc_id, word_index)
    where u.reader_id is null and u.rt_ms > 0
      and not exists (select 1 from observed_measures as o where o.corpus = u.corpus and o.measure = u.measure)
)

select * from observed
union all
select * from user_means
