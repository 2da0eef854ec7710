-- Each scored model's top candidates for the next token at each live top-1 question: the scorer's k most
-- probable next tokens (int_token_scores.topk_*, the run used in the marts) at the model token that starts
-- exactly where the question's token starts, so the model saw the same context text[:true_char_start].
-- A model whose tokens do not start there (its token spans the boundary) has no row for that question.
-- The candidates are the model's OWN tokens, as the text they stand for (macros/token_text.sql): byte-level BPE
-- pieces decoded through GPT-2's byte table and UTF-8 ('ĠJosÃ©' is ' José'), SentencePiece's '▁' a space and
-- '<0xNN>' its byte; a piece that is only part of a character reads as its bytes ('‹bytes e2 80›'). A run is
-- byte-level when its tokens start with 'Ġ' (GPT-2's space) and none holds '▁'.
-- is_model_correct: the most probable candidate reads exactly as the true token (the top-1 accuracy of
-- Shlegeris et al. 2024, sec. 3, on this question).
with questions as (
    select corpus, doc_id, position, true_token, true_char_start
    from {{ ref('int_live_top1_questions') }}
),

runs as (
    select run_id, model_key, corpus from {{ ref('int_runs') }} where used_in_marts
),

tokens as (
    select t.run_id, t.model_key, t.corpus, t.doc_id, t.char_start, t.topk_tokens, t.topk_logprobs_nats
    from {{ ref('int_token_scores') }} as t
    inner join runs as r on r.run_id = t.run_id and r.model_key = t.model_key and r.corpus = t.corpus
    where t.topk_tokens is not null and len(t.topk_tokens) > 0
    -- a character split over several byte-level tokens gives them one char_start: the first one predicts from
    -- the context before that character
    qualify row_number() over (partition by t.run_id, t.model_key, t.corpus, t.doc_id, t.char_start
                               order by t.token_index) = 1
),

styles as (
    select t.run_id, t.model_key, t.corpus,
        bool_or(starts_with(t.token, 'Ġ')) and not bool_or(contains(t.token, '▁')) as byte_level
    from {{ ref('int_token_scores') }} as t
    inner join runs as r on r.run_id = t.run_id and r.model_key = t.model_key and r.corpus = t.corpus
    group by all
),

-- each question's candidates at the run's token, in rank order
candidates as (
    select
        q.corpus, q.doc_id, q.position, t.model_key, t.run_id, q.true_token, s.byte_level,
        t.topk_logprobs_nats as candidate_logprobs_nats,
        unnest(t.topk_tokens) as token,
        generate_subscripts(t.topk_tokens, 1) as rank
    from questions as q
    inner join tokens as t on t.corpus = q.corpus and t.doc_id = q.doc_id and t.char_start = q.true_char_start
    inner join styles as s on s.run_id = t.run_id and s.model_key = t.model_key and s.corpus = t.corpus
),

-- the text of each distinct vocabulary string once (the distinct strings are a few percent of the candidates,
-- and decoding one goes character by character)
texts as (
    select byte_level, token, {{ token_text('token', 'byte_level') }} as token_text
    from (select distinct byte_level, token from candidates where token is not null) as distinct_tokens
),

joined as (
    select
        c.corpus, c.doc_id, c.position, c.model_key, c.run_id, c.true_token,
        -- a NULL vocabulary string has no text (the left join finds none), as token_text(NULL)
        list(x.token_text order by c.rank) as candidate_tokens,
        any_value(c.candidate_logprobs_nats) as candidate_logprobs_nats
    from candidates as c
    left join texts as x on x.byte_level is not distinct from c.byte_level and x.token = c.token
    group by c.corpus, c.doc_id, c.position, c.model_key, c.run_id, c.true_token
)

select
    corpus, doc_id, position, model_key, run_id,
    candidate_tokens,
    candidate_logprobs_nats,
    list_transform(candidate_logprobs_nats, lambda lp: exp(lp)) as candidate_probabilities,
    candidate_tokens[1] as model_top1_token,
    candidate_tokens[1] = true_token as is_model_correct
from joined
