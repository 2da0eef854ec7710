-- Oh & Schuler's (2024) Theorems 1 and 2 on a model whose words can be enumerated: per context and maximum word
-- length L (tokens), the sums of the word probabilities of every candidate word of at most L tokens,
-- LW and WT, from the one word-surprisal definition (macros/word_surprisal.sql). The model is a hand-set
-- bigram LM over " a", " b", "a", "b" and <|endoftext|> (ingest/scoring/diagnostics.py); each scored
-- text is the context followed by one candidate word, so the candidate is the text's last word and its
-- after-term is B after the word (the end of the text).
--
-- Over "the next word, or the end of the text" the WT probabilities are complete (Theorem 2):
--   sum_{w of <= L tokens} p_WT(w | c) + p(eot | c) / B(c) + R_L = 1,
-- R_L = sum_{w of exactly L tokens} p_LW(w | c) (1 - B(after w)) / B(c): the mass of the longer words
-- (each longer word begins with a word of L tokens that goes on; every token outside B continues a
-- word). B(c) = the candidate's before-term; ln p(eot | c) = the end-of-text entry of the scorer's
-- distribution at c (top-k = the whole vocabulary) on the candidate's first token. LW has no such
-- identity: its sum exceeds 1 where new words run long (Theorem 1; context word_end).
with tokens as (
    select * from {{ ref('stg_word_probability_sums_tokens') }}
),

words as (
    select corpus, doc_id, word_index, word, char_start, char_end
    from {{ ref('stg_word_probability_sums_words') }}
),

texts as (
    select distinct corpus, doc_id, context_key, context, context_note, end_of_text_token
    from {{ ref('stg_word_probability_sums_words') }}
),

surprisal as (
    {{ word_surprisal_sql('tokens', 'words') }}
),

candidates as (
    -- the candidate: the last word of each text
    select
        s.run_id, s.model_key, x.context_key, x.context, x.context_note, s.doc_id, s.n_tokens, s.is_aligned,
        s.logprob_lw_nats, s.logprob_wt_nats,
        s.logprob_boundary_before_nats as logprob_boundary_context_nats,
        s.logprob_boundary_after_nats,
        t.topk_logprobs_nats[list_position(t.topk_tokens, x.end_of_text_token)] as logprob_end_of_text_nats
    from surprisal as s
    inner join texts as x on x.corpus = s.corpus and x.doc_id = s.doc_id
    left join tokens as t
        on t.run_id = s.run_id and t.corpus = s.corpus and t.doc_id = s.doc_id
        and t.token_index = s.first_token_index
    where s.is_last_word
),

lengths as (
    select distinct context_key, n_tokens as max_word_tokens from candidates where n_tokens > 0
),

sums as (
    select
        c.run_id, c.model_key, c.context_key, any_value(c.context) as context,
        any_value(c.context_note) as context_note, l.max_word_tokens,
        count(*) as n_words,
        count(*) filter (where not c.is_aligned) as n_unaligned_words,
        exp(avg(c.logprob_boundary_context_nats)) as p_boundary_context,
        exp(avg(c.logprob_end_of_text_nats)) as p_end_of_text,
        sum(exp(c.logprob_wt_nats)) as sum_p_wt,
        avg(exp(c.logprob_end_of_text_nats - c.logprob_boundary_context_nats)) as p_end_of_text_over_boundary,
        coalesce(sum(exp(c.logprob_lw_nats - c.logprob_boundary_context_nats)
                     * (1 - exp(c.logprob_boundary_after_nats)))
            filter (where c.n_tokens = l.max_word_tokens), 0) as remainder_longer_words,
        sum(exp(c.logprob_lw_nats)) as sum_p_lw,
        greatest(max(c.logprob_boundary_context_nats) - min(c.logprob_boundary_context_nats),
                 max(c.logprob_end_of_text_nats) - min(c.logprob_end_of_text_nats)) as context_spread_nats
    from candidates as c
    inner join lengths as l on l.context_key = c.context_key and c.n_tokens <= l.max_word_tokens
    group by c.run_id, c.model_key, c.context_key, l.max_word_tokens
)

select
    run_id, model_key, context_key, context, context_note, max_word_tokens, n_words, n_unaligned_words,
    p_boundary_context, p_end_of_text, sum_p_wt, p_end_of_text_over_boundary, remainder_longer_words,
    sum_p_wt + p_end_of_text_over_boundary + remainder_longer_words as total_wt,
    sum_p_wt + p_end_of_text_over_boundary + remainder_longer_words - 1 as total_wt_error,
    sum_p_lw,
    context_spread_nats
from sums
order by context_key, max_word_tokens
