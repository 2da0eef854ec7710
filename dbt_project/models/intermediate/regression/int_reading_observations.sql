-- The reading times the regressions model: one row per (corpus, measure, reader, word) kept after the
-- exclusions below. A skipped word has no duration (NULL upstream of here) and so no row: it never enters a
-- duration regression as 0 ms.
--   natural_stories / spr (paper 001 appendix B): 100 <= RT <= 3000 ms; sentence-initial and sentence-final
--     words out; readers who answered fewer than 4 of the story's 6 comprehension questions correctly out.
--   ucl / spr: 100 <= RT <= 3000 ms (pangoling's file is already cleaned by reader); the first and last word
--     of each sentence (= text) out.
--   provo, ucl / first_fixation, gaze_duration, go_past, total_reading_time (eye tracking): the first and
--     last word of each text out (line starts and ends are not in the warehouse: Provo's word boxes are not
--     ingested; UCL sentences were shown on one line, so their line ends are their text ends); words not
--     fixated (first-pass measures: skipped in first pass; total time: never fixated) have no row.
--   user corpora (stg_user_reading_times rows with a reader_id), any measure: every row with rt_ms > 0 of a
--     word of the corpus; no other exclusion (no RT range, no sentence or text edges, no comprehension
--     criterion): the user's file is taken as the data the user wants modelled. Per-word means (no reader_id)
--     enter int_reading_word_means directly.
with words as (
    select * from {{ ref('int_reading_words') }}
),

spr as (
    select
        s.corpus, 'spr' as measure, s.reader_id, s.doc_id, s.word_index, cast(s.rt_ms as double) as rt_ms
    from {{ ref('stg_self_paced_reading') }} as s
    inner join words as w using (corpus, doc_id, word_index)
    where s.rt_ms between 100 and 3000
      and (s.corpus <> 'natural_stories' or s.reader_correct_answers >= 4)
      and not (s.corpus = 'natural_stories' and (w.is_sentence_first or w.is_sentence_last))
      and not (s.corpus = 'ucl' and (w.is_text_first or w.is_text_last))
),

eye as (
    unpivot (
        select corpus, reader_id, doc_id, word_index,
               first_fixation_ms as first_fixation, gaze_duration_ms as gaze_duration,
               go_past_ms as go_past, total_reading_time_ms as total_reading_time
        from {{ ref('int_eye_tracking_measures') }}
    )
    on first_fixation, gaze_duration, go_past, total_reading_time
    into name measure value rt_ms
),

eye_kept as (
    select e.corpus, e.measure, e.reader_id, e.doc_id, e.word_index, cast(e.rt_ms as double) as rt_ms
    from eye as e
    inner join words as w using (corpus, doc_id, word_index)
    where e.rt_ms is not null and not (w.is_text_first or w.is_text_last)
),

user_readers as (
    select u.corpus, u.measure, u.reader_id, u.doc_id, u.word_index, u.rt_ms
    from {{ ref('stg_user_reading_times') }} as u
    inner join words as w using (corpus, doc_id, word_index)
    where u.reader_id is not null and u.rt_ms > 0
)

select * from spr
union all
select * from eye_kept
union all
select * from user_readers
