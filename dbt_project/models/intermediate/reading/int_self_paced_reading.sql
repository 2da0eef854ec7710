-- Self-paced reading per reader and word, every ingested row, with the standard exclusions flagged (never dropped):
-- each corpus's own cleaning, as it declares it (ingest/corpora.toml [<corpus>.exclusions.self_paced_reading]:
-- RT <= rt_ms[0] or RT >= rt_ms[1], fewer than min_correct_answers correct comprehension answers).
--   natural_stories: Futrell et al. (2021, LRE 55) naturalstories_RTS/process_RTs.R keeps RT > 100 and RT < 3000 ms
--     and readers with more than 4 correct comprehension answers (of 6) on the story (`correct` of the file, per
--     reader and story).
--   ucl: pangoling's file is already cleaned by reader and sentence (native speakers with > 80 % comprehension
--     accuracy; typo sentences 43, 269, 337 dropped; no RT removed); here only the same RT range applies.
with spr as (
    -- the shipped corpora's self-paced reading (their declared exclusions below); a user corpus's per-reader times
    -- enter the regressions (int_reading_observations) but not these upstream rows and their flags
    select * exclude (rt_ms), cast(rt_ms as integer) as rt_ms  -- whole milliseconds, as recorded upstream
    from {{ ref('stg_reading_times') }}
    where measure in ({{ sql_strings(kind_measures('self_paced_reading')) }}) and reader_id is not null
      and corpus in {{ shipped_corpora_reading('self_paced_reading') }}
),

exclusions as (
    select * from ({{ reading_exclusions() }}) where kind = 'self_paced_reading'
),

flagged as (
    select
        s.*,
        s.rt_ms <= x.rt_min_ms as rt_too_short,
        s.rt_ms >= x.rt_max_ms as rt_too_long,
        x.min_correct_answers is not null and s.reader_correct_answers < x.min_correct_answers
            as comprehension_too_low,
        x.rt_min_ms, x.rt_max_ms, x.min_correct_answers, x.comprehension_questions
    from spr as s
    left join exclusions as x using (corpus)
)

select
    corpus, reader_id, doc_id, word_index, native_id, word, rt_ms,
    reader_correct_answers, reader_accuracy, trial_order, trial_answer_correct, upstream_sentence_id,
    rt_too_short or rt_too_long or comprehension_too_low as excluded,
    nullif(concat_ws('; ',
        case when rt_too_short then printf('rt_at_most_%d_ms', cast(rt_min_ms as integer)) end,
        case when rt_too_long then printf('rt_at_least_%d_ms', cast(rt_max_ms as integer)) end,
        case when comprehension_too_low
            then printf('comprehension_at_most_%d_of_%d', min_correct_answers - 1, comprehension_questions) end),
        '') as exclusion_reason,
    source_path, source_sha256
from flagged
