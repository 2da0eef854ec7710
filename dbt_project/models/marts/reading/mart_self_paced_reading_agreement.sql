-- Agreement of per-word mean self-paced reading times computed here under several row filters with the
-- published per-word means (int_self_paced_reading_published_means): which filter reproduces them.
-- One row per corpus and filter. Filters (rt_ms, reader_correct_answers of mart_self_paced_reading):
--   mart_filter       the rows mart_self_paced_reading keeps (natural_stories: 100 < RT < 3000 ms and > 4 correct
--                     answers on the story, as process_RTs.R; ucl: 100 < RT < 3000 ms)
--   rt_inclusive      a corpus whose cleaning has a comprehension criterion (natural_stories): the declared RT range
--                     with its ends (100 <= RT <= 3000 ms) and the criterion (> 4 correct answers)
--   rt_only           the same corpora: 100 < RT < 3000 ms, no comprehension criterion
--   none              every row
{%- set tolerance_ms = 1e-6 %}
with spr as (
    select * from {{ ref('int_self_paced_reading') }}
),

exclusions as (  -- the corpora whose own cleaning has a comprehension criterion (ingest/corpora.toml)
    select * from ({{ reading_exclusions() }})
    where kind = 'self_paced_reading' and min_correct_answers is not null
),

variants as (
    select corpus, doc_id, word_index, 'mart_filter' as filter, rt_ms from spr where not excluded
    union all
    select s.corpus, s.doc_id, s.word_index, 'rt_inclusive', s.rt_ms from spr as s
    inner join exclusions as x using (corpus)
    where s.rt_ms between x.rt_min_ms and x.rt_max_ms and s.reader_correct_answers >= x.min_correct_answers
    union all
    select s.corpus, s.doc_id, s.word_index, 'rt_only', s.rt_ms from spr as s
    inner join exclusions as x using (corpus)
    where s.rt_ms > x.rt_min_ms and s.rt_ms < x.rt_max_ms
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
    from means as m
    inner join published as p using (corpus, doc_id, word_index)
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
