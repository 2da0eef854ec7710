-- The reading times the regressions model: one row per (corpus, measure, reader, word) kept after the
-- exclusions each corpus declares for each kind of reading data (ingest/corpora.toml [<corpus>.exclusions.<kind>],
-- through macros/declarations.sql's reading_exclusions()). A skipped word has no duration (NULL upstream of here)
-- and so no row: it never enters a duration regression as 0 ms. What the shipped corpora declare:
--   natural_stories / spr (Oh & Schuler 2024, appendix B): 100 <= RT <= 3000 ms; sentence-initial and sentence-final
--     words out; readers who answered fewer than 4 of the story's 6 comprehension questions correctly out.
--   ucl / spr: 100 <= RT <= 3000 ms (pangoling's file is already cleaned by reader); the first and last word
--     of each sentence (= text) out.
--   provo, ucl / first_fixation, gaze_duration, go_past, total_reading_time (eye tracking): the first and
--     last word of each text out (line starts and ends are not in the warehouse: Provo's word boxes are not
--     ingested; UCL sentences were shown on one line, so their line ends are their text ends); words not
--     fixated (first-pass measures: skipped in first pass; total time: never fixated) have no row.
--   user corpora (stg_reading_times rows with a reader_id), any measure: every row with rt_ms > 0 of a word of
--     the corpus; they declare no exclusion (no RT range, no sentence or text edges, no comprehension
--     criterion): the user's file is taken as the data the user wants modelled. Per-word means (no reader_id)
--     enter int_reading_word_means directly.
-- Per-reader rows come from two canonical tables: reading times (stg_reading_times: every corpus's self-paced
-- reading and a user's any measure) and eye-tracking fixations (the measures derived in int_eye_tracking_measures);
-- a row's kind (which exclusions apply) is its measure's.
with words as (
    select * from {{ ref('int_reading_words') }}
),

exclusions as (
{{ reading_exclusions() }}
),

timed as (
    select
        corpus,
        case when measure in ({{ sql_strings(kind_measures('self_paced_reading')) }}) then 'self_paced_reading'
             else 'eye_tracking' end as kind,
        measure, reader_id, doc_id, word_index, rt_ms, reader_correct_answers
    from {{ ref('stg_reading_times') }}
    where reader_id is not null and rt_ms > 0
),

eye as (
    unpivot (
        select corpus, 'eye_tracking' as kind, reader_id, doc_id, word_index,
               first_fixation_ms as first_fixation, gaze_duration_ms as gaze_duration,
               go_past_ms as go_past, total_reading_time_ms as total_reading_time
        from {{ ref('int_eye_tracking_measures') }}
    )
    on first_fixation, gaze_duration, go_past, total_reading_time
    into name measure value rt_ms
),

observations as (
    select * from timed
    union all by name
    select corpus, kind, measure, reader_id, doc_id, word_index, cast(rt_ms as double) as rt_ms,
           cast(null as integer) as reader_correct_answers
    from eye
    where rt_ms is not null
)

select o.corpus, o.measure, o.reader_id, o.doc_id, o.word_index, o.rt_ms
from observations as o
inner join words as w using (corpus, doc_id, word_index)
left join exclusions as x on x.corpus = o.corpus and x.kind = o.kind
where (x.rt_min_ms is null or o.rt_ms between x.rt_min_ms and x.rt_max_ms)
  and (x.regression_min_correct_answers is null or o.reader_correct_answers >= x.regression_min_correct_answers)
  and not (case x.edges when 'sentence' then w.is_sentence_first or w.is_sentence_last
                        when 'text' then w.is_text_first or w.is_text_last
                        else false end)
