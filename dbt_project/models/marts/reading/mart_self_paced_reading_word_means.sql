-- Per corpus word of the shipped self-paced reading corpora (ingest/corpora.toml: Natural Stories, UCL): the
-- mean RT over the rows kept by mart_self_paced_reading (not excluded), with the word's frequency and length, and the
-- published mean beside it.
with words as (
    select * from {{ ref('stg_words') }}
    where corpus in {{ shipped_corpora_reading('self_paced_reading') }}
),

spr as (
    select * from {{ ref('int_self_paced_reading') }}
),

means as (
    select
        corpus, doc_id, word_index,
        count(*) as n_rows,
        count(*) filter (where not excluded) as n_rows_kept,
        count(distinct reader_id) filter (where not excluded) as n_readers,
        avg(rt_ms) filter (where not excluded) as mean_rt_ms,
        stddev_samp(rt_ms) filter (where not excluded) as sd_rt_ms,
        median(rt_ms) filter (where not excluded) as median_rt_ms,
        exp(avg(ln(rt_ms)) filter (where not excluded)) as geometric_mean_rt_ms
    from spr
    group by all
),

freq as (
    select * from {{ ref('stg_word_frequencies') }} where frequency_source = 'wordfreq'
),

published as (
    select * from {{ ref('int_self_paced_reading_published_means') }}
)

select
    w.corpus, w.doc_id, w.word_index, w.native_id, w.word,
    coalesce(m.n_rows, 0) as n_rows,
    coalesce(m.n_rows_kept, 0) as n_rows_kept,
    coalesce(m.n_readers, 0) as n_readers,
    m.mean_rt_ms, m.sd_rt_ms, m.median_rt_ms, m.geometric_mean_rt_ms,
    f.lookup_form as frequency_lookup_form,
    f.zipf_frequency,
    f.wordfreq_frequency,
    f.google_books_count,
    length(replace(f.lookup_form, ' ', '')) as word_length_chars,
    p.published_mean_rt_ms,
    p.published_n_readers,
    p.published_source,
    m.mean_rt_ms - p.published_mean_rt_ms as mean_rt_minus_published_ms
from words as w
left join means as m using (corpus, doc_id, word_index)
left join freq as f using (corpus, doc_id, word_index)
left join published as p using (corpus, doc_id, word_index)
