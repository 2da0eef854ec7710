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
with runs as (
    select run_id from {{ ref('int_runs') }} where used_in_marts
),
scored as (
    select t.*
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
        max(char_end) as scored_char_end
    from scored
    group by all
),
doc_words as (
    select s.run_id, s.doc_id, count(distinct w.word_index) as n_words
    from scored as s
    inner join {{ ref('stg_words') }} as w
        on w.corpus = s.corpus and w.doc_id = s.doc_id
        and w.char_end > s.char_start and w.char_end <= s.char_end
    group by all
)
select
    d.*,
    coalesce(w.n_words, 0) as n_words
from doc_sums as d
left join doc_words as w using (run_id, doc_id)
