-- Reading measures per reader and word from the fixation sequences (definitions: the model description in
-- _eye_tracking__models.yml; Rayner 1998, Clifton, Staub & Rayner 2007). One row for every word of every
-- text a reader read (a text is read when the reader has at least one fixation in it), fixated or not.
--
-- The one idea: walk a text's fixations in order and keep `furthest_word_index`, the rightmost word fixated
-- so far (this fixation included; fixations on no word do not move it). A word w is entered in first pass
-- iff some fixation has furthest_word_index = w (its first fixation came before any fixation to its right),
-- and the fixations with furthest_word_index = w are exactly those from that first entry up to (not
-- including) the first fixation on a word to the right of w: their sum is the go-past time, those of them on
-- w the right-bounded time, the first of them the first fixation. The first pass is the first run of
-- consecutive fixations on w; a fixation on no word ends a run.
--
-- A text read twice by the same reader (Provo: each reader's first text comes back as their 56th trial,
-- `trial_index`) counts its FIRST reading only: a re-reading is not a first encounter, and running the two
-- readings together as one sequence would corrupt every first-pass measure. UCL has one reading per
-- sentence (trial_index NULL).
with all_fixations as (
    select corpus, reader_id, doc_id, trial_index, fixation_index, word_index, duration_ms, blink,
        min(trial_index) over (partition by corpus, reader_id, doc_id) as first_trial_index
    from {{ ref('stg_eye_tracking_fixations') }}
),

fixations as (
    select corpus, reader_id, doc_id, fixation_index, word_index, duration_ms, blink
    from all_fixations
    where trial_index is null or trial_index = first_trial_index
),

sequenced as (
    select
        *,
        max(word_index) over running as furthest_word_index,
        lag(word_index) over text_order as previous_word_index
    from fixations
    window
        text_order as (partition by corpus, reader_id, doc_id order by fixation_index),
        running as (partition by corpus, reader_id, doc_id order by fixation_index
                    rows between unbounded preceding and current row)
),

runs as (
    -- a run: maximal sequence of consecutive fixations on the same word (a fixation on no word is its own run)
    select
        *,
        sum(case when word_index is not null and previous_word_index is not distinct from word_index
                 then 0 else 1 end) over text_order as run_number
    from sequenced
    window text_order as (partition by corpus, reader_id, doc_id order by fixation_index)
),

next_on_word as (
    -- for each fixation on a word: the word of the next fixation that lands on a word (fixations on no word
    -- passed over), NULL at the end of the trial
    select corpus, reader_id, doc_id, fixation_index,
        lead(word_index) over (partition by corpus, reader_id, doc_id order by fixation_index) as next_word_index
    from fixations
    where word_index is not null
),

go_past as (
    -- the go-past region of each word entered in first pass
    select
        corpus, reader_id, doc_id,
        furthest_word_index as word_index,
        sum(duration_ms) as go_past_ms,
        sum(duration_ms) filter (where word_index = furthest_word_index) as right_bounded_ms,
        min(fixation_index) as first_pass_entry_fixation_index,
        arg_min(duration_ms, fixation_index) as first_fixation_ms
    from runs
    where furthest_word_index is not null
    group by all
),

first_run as (
    select r.corpus, r.reader_id, r.doc_id, r.word_index, r.run_number
    from runs as r
    inner join go_past as g
        on r.corpus = g.corpus and r.reader_id = g.reader_id and r.doc_id = g.doc_id
        and r.fixation_index = g.first_pass_entry_fixation_index
),

first_pass as (
    select
        r.corpus, r.reader_id, r.doc_id, r.word_index,
        sum(r.duration_ms) as gaze_duration_ms,
        count(*) as first_pass_fixations,
        bool_or(r.blink is not null) as first_pass_blink,
        max(r.fixation_index) as first_pass_exit_fixation_index
    from runs as r
    inner join first_run as f
        on r.corpus = f.corpus and r.reader_id = f.reader_id and r.doc_id = f.doc_id
        and r.run_number = f.run_number
    group by all
),

first_pass_exit as (
    select
        p.*,
        coalesce(n.next_word_index < p.word_index, false) as regression_out  -- the trial's end: no regression
    from first_pass as p
    inner join next_on_word as n
        on p.corpus = n.corpus and p.reader_id = n.reader_id and p.doc_id = n.doc_id
        and p.first_pass_exit_fixation_index = n.fixation_index
),

totals as (
    select corpus, reader_id, doc_id, word_index,
        sum(duration_ms) as total_reading_time_ms,
        count(*) as n_fixations
    from fixations
    where word_index is not null
    group by all
),

texts_read as (
    select distinct corpus, reader_id, doc_id
    from fixations
),

reader_words as (
    select t.corpus, t.reader_id, t.doc_id, w.word_index
    from texts_read as t
    inner join {{ ref('stg_words') }} as w on w.corpus = t.corpus and w.doc_id = t.doc_id
)

select
    rw.corpus,
    rw.reader_id,
    rw.doc_id,
    rw.word_index,
    g.first_fixation_ms,
    p.gaze_duration_ms,
    g.right_bounded_ms,
    g.go_past_ms,
    tot.total_reading_time_ms,
    coalesce(tot.n_fixations, 0) as n_fixations,
    p.first_pass_fixations,
    g.word_index is null as skipped_first_pass,
    p.regression_out,
    p.first_pass_blink
from reader_words as rw
left join go_past as g using (corpus, reader_id, doc_id, word_index)
left join first_pass_exit as p using (corpus, reader_id, doc_id, word_index)
left join totals as tot using (corpus, reader_id, doc_id, word_index)
