-- Self-paced reading per reader and word, every ingested row, with the standard exclusions flagged (never dropped).
--   natural_stories: Futrell et al. (2021, LRE 55) naturalstories_RTS/process_RTs.R keeps RT > 100 and RT < 3000 ms
--     and readers with more than 4 correct comprehension answers (of 6) on the story (`correct` of the file, per
--     reader and story).
--   ucl: pangoling's file is already cleaned by reader and sentence (native speakers with > 80 % comprehension
--     accuracy; typo sentences 43, 269, 337 dropped; no RT removed); here only the same RT range applies.
with spr as (
    select * from {{ ref('stg_self_paced_reading') }}
),

flagged as (
    select
        *,
        rt_ms <= 100 as rt_too_short,
        rt_ms >= 3000 as rt_too_long,
        corpus = 'natural_stories' and reader_correct_answers <= 4 as comprehension_too_low
    from spr
)

select
    corpus, reader_id, doc_id, word_index, native_id, word, rt_ms,
    reader_correct_answers, reader_accuracy, trial_order, trial_answer_correct, upstream_sentence_id,
    rt_too_short or rt_too_long or comprehension_too_low as excluded,
    nullif(concat_ws('; ',
        case when rt_too_short then 'rt_at_most_100_ms' end,
        case when rt_too_long then 'rt_at_least_3000_ms' end,
        case when comprehension_too_low then 'comprehension_at_most_4_of_6' end), '') as exclusion_reason,
    source_path, source_sha256
from flagged
