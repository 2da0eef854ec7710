-- Agreement of per-word mean self-paced reading times computed here under several row filters with the
-- published per-word means (int_self_paced_reading_published_means): which filter reproduces them.
-- One row per corpus and filter. Filters (rt_ms, reader_correct_answers of mart_self_paced_reading):
--   mart_filter       the rows mart_self_paced_reading keeps (natural_stories: 100 < RT < 3000 ms and > 4 correct
--                     answers on the story, as process_RTs.R; ucl: 100 < RT < 3000 ms)
--   rt_inclusive      natural_stories: 100 <= RT <= 3000 ms and > 4 correct answers
--   rt_only           100 < RT < 3000 ms, no comprehension criterion (natural_stories)
--   none              every row
{%- set tolerance_ms = 1e-6 %}
with spr as (
    select * from {{ ref('mart_self_paced_reading') }}
),

variants as (
    select corpus, doc_id, word_index, 'mart_filter' as filter, rt_ms from spr where not excluded
    union all
    select corpus, doc_id, word_index, 'rt_inclusive', rt_ms from spr
    where corpus = 'natural_stories' and rt_ms between 100 and 3000 and reader_correct_answers > 4
    union all
    select corpus, doc_id, word_index, 'rt_only', rt_ms from spr
    where corpus = 'natural_stories' and rt_ms > 100 and rt_ms < 3000
    union all
    select corpus, doc_id, word_index, 'none', rt_ms from spr
),

means as (
    select corpus, doc_id, word_index, filter, avg(rt_ms) as mean_rt_ms, count(*) as n_readers
    from variants
    group by all
),

published as (
    select * from {{ ref('int_self_paced_reading_published_means') }}
),

paired as (
    select m.*, p.published_mean_rt_ms, p.published_n_readers, p.published_source,
        abs(m.mean_rt_ms - p.published_mean_rt_ms) as abs_diff_ms
    from means m
    join published p using (corpus, doc_id, word_index)
)

select
    corpus,
    filter,
    filter = 'mart_filter' as is_mart_filter,
    any_value(published_source) as published_source,
    count(*) as n_words,
    corr(mean_rt_ms, published_mean_rt_ms) as pearson_r,
    avg(abs_diff_ms) as mean_abs_diff_ms,
    max(abs_diff_ms) as max_abs_diff_ms,
    avg(mean_rt_ms - published_mean_rt_ms) as mean_diff_ms,
    count(*) filter (where abs_diff_ms <= {{ tolerance_ms }}) as n_words_equal,
    count(*) filter (where n_readers = published_n_readers) as n_words_same_n_readers,
    count(*) filter (where abs_diff_ms <= {{ tolerance_ms }}) = count(*) as reproduces_published
from paired
group by corpus, filter
