-- Reading measures per corpus, reader, text and word (int_eye_tracking_measures) with the word's text and
-- native key (stg_words) and the provenance of the reader's fixations in that text.
with measures as (
    select * from {{ ref('int_eye_tracking_measures') }}
),

words as (
    select corpus, doc_id, word_index, word, native_id from {{ ref('stg_words') }}
),

provenance as (
    select corpus, reader_id, doc_id,
        min(source_path) as source_path,
        min(source_sha256) as source_sha256
    from {{ ref('stg_eye_tracking_fixations') }}
    group by all
)

select
    m.corpus,
    m.reader_id,
    m.doc_id,
    m.word_index,
    w.native_id,
    w.word,
    m.first_fixation_ms,
    m.gaze_duration_ms,
    m.right_bounded_ms,
    m.go_past_ms,
    m.total_reading_time_ms,
    m.n_fixations,
    m.first_pass_fixations,
    m.skipped_first_pass,
    m.regression_out,
    m.first_pass_blink,
    p.source_path,
    p.source_sha256
from measures as m
inner join words as w using (corpus, doc_id, word_index)
inner join provenance as p using (corpus, reader_id, doc_id)
