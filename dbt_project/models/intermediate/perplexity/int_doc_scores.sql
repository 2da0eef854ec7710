-- Per-document sums for the runs used by the marts (int_runs.used_in_marts).
--
-- Scored text of a document := the union of the character spans of its SCORED tokens
-- (logprob_nats not NULL). Token spans tile the text, so this is the set of characters the
-- model was asked to predict:
--   * a scorer run of an lm_game document covers text[:score_prefix_chars] (only that prefix
--     is tokenized), of any other document the whole text;
--   * an imported GPT-3 run leaves each story's first token unscored (NULL logprob): its
--     characters, bytes and words are not counted.
-- Hence
--   n_chars  = sum over scored tokens of (char_end - char_start)
--   n_bytes  = sum over scored tokens of UTF-8 bytes of token_text
--   n_words  = number of raw.words whose LAST character lies in a scored token's span
--              (scored.char_start < word.char_end <= scored.char_end); each word is counted
--              once because the spans tile.
--
-- Cost (bench/lake.py): n_words used to join every scored token to every word of its
-- document (a range join, tokens x words per document: quadratic in document length; 198 s of a
-- 230 s build at 10^8 rows, 6-10 s now). It is now linear, with the same counts:
--   * `tiled`: a document's scored spans tile [scored_char_start, scored_char_end) exactly -- none
--     runs backwards or is NULL, and the multiset of starts plus the last end equals the multiset
--     of ends plus the first start (compared as sums of hash(); spans of length 0 allowed). Then
--     the union of the spans IS that interval, and the words counted are those with
--     scored_char_start < char_end <= scored_char_end: one join of the words to each distinct
--     (corpus, doc_id, interval), whatever the number of runs (hull_words). The scorer's spans
--     always tile (ingest/scoring/profile.py check_spans_tile), and so do the GPT-3 import's.
--   * any other document (a gap or an overlap between scored spans) keeps the exact token x word
--     join, on its own tokens only (untiled_words; the semi join reads nothing when every document
--     tiles). The one way to differ from the old join: a non-tiling document whose hash sums agree
--     by chance (probability ~2^-64 per document).
-- `scored` reads only the columns used here (not the top-k lists); it is read once.
with runs as (
    select run_id from {{ ref('int_runs') }} where used_in_marts
),

scored as (
    select t.run_id, t.model_key, t.corpus, t.doc_id, t.char_start, t.char_end,
        t.surprisal_nats, t.surprisal_bits, t.n_chars, t.n_bytes
    from {{ ref('int_token_scores') }} as t
    inner join runs using (run_id)
    where t.is_scored
),

doc_sums as (
    select
        run_id, model_key, corpus, doc_id,
        count(*) as n_tokens,
        sum(surprisal_nats) as total_surprisal_nats,
        sum(surprisal_bits) as total_surprisal_bits,
        cast(sum(n_chars) as bigint) as n_chars,
        cast(sum(n_bytes) as bigint) as n_bytes,
        min(char_start) as scored_char_start,
        max(char_end) as scored_char_end,
        count(*) = count(char_start) and count(*) = count(char_end) and min(char_end - char_start) >= 0
            and sum(hash(char_start)) + hash(max(char_end)) = sum(hash(char_end)) + hash(min(char_start)) as tiled
    from scored
    group by all
),

hull_words as (
    select h.corpus, h.doc_id, h.scored_char_start, h.scored_char_end, count(distinct w.word_index) as n_words
    from (select distinct corpus, doc_id, scored_char_start, scored_char_end from doc_sums where tiled) as h
    inner join {{ ref('stg_words') }} as w
        on w.corpus = h.corpus and w.doc_id = h.doc_id
        and w.char_end > h.scored_char_start and w.char_end <= h.scored_char_end
    group by all
),

untiled_words as (
    select s.run_id, s.doc_id, count(distinct w.word_index) as n_words
    from (
        select t.run_id, t.corpus, t.doc_id, t.char_start, t.char_end
        from {{ ref('int_token_scores') }} as t
        semi join (select run_id, doc_id from doc_sums where not tiled) as u using (run_id, doc_id)
        where t.is_scored
    ) as s
    inner join {{ ref('stg_words') }} as w
        on w.corpus = s.corpus and w.doc_id = s.doc_id
        and w.char_end > s.char_start and w.char_end <= s.char_end
    group by all
)

select
    d.run_id, d.model_key, d.corpus, d.doc_id, d.n_tokens, d.total_surprisal_nats, d.total_surprisal_bits,
    d.n_chars, d.n_bytes, d.scored_char_start, d.scored_char_end,
    coalesce(case when d.tiled then h.n_words else u.n_words end, 0) as n_words
from doc_sums as d
left join hull_words as h
    on d.tiled and h.corpus = d.corpus and h.doc_id = d.doc_id
    and h.scored_char_start = d.scored_char_start and h.scored_char_end = d.scored_char_end
left join untiled_words as u on not d.tiled and u.run_id = d.run_id and u.doc_id = d.doc_id
