-- Per corpus word: each reading measure averaged over the readers that have it (SQL avg ignores NULLs, so a
-- skip never counts as 0 ms), with the number of readers and the first-pass skip rate.
with measures as (
    select * from {{ ref('int_eye_tracking_measures') }}
),

words as (
    select corpus, doc_id, word_index, word, native_id from {{ ref('stg_words') }}
),

means as (
    select
        corpus, doc_id, word_index,
        count(*) as n_readers,
        count(first_fixation_ms) as n_readers_first_pass,
        count(total_reading_time_ms) as n_readers_fixated,
        avg(skipped_first_pass::int) as skip_rate,
        avg(first_fixation_ms) as mean_first_fixation_ms,
        avg(gaze_duration_ms) as mean_gaze_duration_ms,
        avg(right_bounded_ms) as mean_right_bounded_ms,
        avg(go_past_ms) as mean_go_past_ms,
        avg(total_reading_time_ms) as mean_total_reading_time_ms,
        avg(n_fixations) as mean_n_fixations,
        avg(regression_out::int) as regression_out_rate
    from measures
    group by all
)

select
    m.corpus,
    m.doc_id,
    m.word_index,
    w.native_id,
    w.word,
    m.n_readers,
    m.n_readers_first_pass,
    m.n_readers_fixated,
    m.skip_rate,
    m.mean_first_fixation_ms,
    m.mean_gaze_duration_ms,
    m.mean_right_bounded_ms,
    m.mean_go_past_ms,
    m.mean_total_reading_time_ms,
    m.mean_n_fixations,
    m.regression_out_rate
from means as m
inner join words as w using (corpus, doc_id, word_index)
