-- Each scored model's top-1 prediction on the top-1 game's questions, one row per (model, question),
-- with the comparison it used (never mixed):
--
--   exact_token  the model's tokenizer is the game's (GPT-2 BPE): the scorer's top-1 token at the
--                question (`int_token_scores`, lm_game run used in the marts) against the true token.
--                Only where the model's token at the question has exactly the game token's span.
--                The token strings are the game's own (`stg_game_vocabulary`, by id), so a
--                prediction reads as a player's guess would.
--   word_top1    any other tokenizer: the model's most probable next WORD among the game's choice
--                set, on the word-token questions (`predictabase top1`, ingest/scoring/top1_words.py;
--                p(w | c) = prod p(tokens) * B(after w), Oh & Schuler 2024, eqs. 5-6). `argmax_proven`:
--                p(prediction) >= the most probable unexpanded token prefix, so no word of the
--                choice set can be more probable; `proven_by_mass`: the stricter p(prediction) >
--                the total unexplored probability mass.
--
-- A model "uses the game's tokenizer" when at most 1% of the tokens it produced on the game's
-- documents (outside U+FFFD pieces) read differently from the game's vocabulary entry of the same
-- id (the game's vocabulary file drops the space of ' .' and a few other ids: 23 of 50,257).
with questions as (
    select doc_id, position, true_token, true_char_start, true_char_end
    from {{ ref('int_top1_questions') }}
    where not is_out_of_range
),

vocab as (
    select token_id, token from {{ ref('stg_game_vocabulary') }}
),

lm_game_runs as (
    select run_id, model_key from {{ ref('int_runs') }}
    where corpus = {{ game_corpus() }} and used_in_marts
),

lm_game_tokens as (
    select t.*
    from {{ ref('int_token_scores') }} as t
    inner join lm_game_runs as r on r.run_id = t.run_id and r.model_key = t.model_key
    where t.corpus = {{ game_corpus() }}
),

game_tokenizer_runs as (
    select t.run_id, t.model_key
    from lm_game_tokens as t
    left join vocab as v on v.token_id = t.token_id
    where not contains(t.token_text, chr(65533))
    group by t.run_id, t.model_key
    having count(*) >= 100
        and count(*) filter (where v.token is distinct from t.token_text) <= 0.01 * count(*)
),

exact_candidates as (
    select
        t.run_id, t.model_key, t.doc_id, t.char_start, t.char_end, t.token_id,
        list(v.token order by k.k) as candidate_words,
        list(t.topk_logprobs_nats[k.k] order by k.k) as candidate_logprobs_nats
    from lm_game_tokens as t
    inner join game_tokenizer_runs as g on g.run_id = t.run_id and g.model_key = t.model_key
    cross join lateral (select unnest(range(1, len(t.topk_token_ids) + 1)) as k) as k
    left join vocab as v on v.token_id = t.topk_token_ids[k.k]
    group by all
),

exact as (
    select
        c.model_key, c.run_id, 'exact_token' as comparison, q.doc_id, q.position, 'ok' as status,
        c.candidate_words, c.candidate_logprobs_nats,
        c.candidate_words as top_first_tokens, c.candidate_logprobs_nats as top_first_token_logprobs_nats,
        true as argmax_proven, true as proven_by_mass,
        cast(null as double) as max_unexplored_bound, cast(null as double) as unexplored_mass,
        cast(null as integer) as n_expanded
    from questions as q
    inner join exact_candidates as c
        on c.doc_id = q.doc_id and c.char_start = q.true_char_start and c.char_end = q.true_char_end
    where len(c.candidate_words) > 0
),

word_runs as (
    select run_id, model_key, run_dir,
        row_number() over (partition by model_key order by finished_at desc nulls last, run_id desc) as recency
    from {{ ref('stg_top1_word_runs') }}
    where run_limit is null
),

word as (
    select
        p.model_key, p.run_id, 'word_top1' as comparison, p.doc_id, p.position, p.status,
        p.candidate_words, p.candidate_logprobs_nats, p.top_first_tokens, p.top_first_token_logprobs_nats,
        exp(p.candidate_logprobs_nats[1]) >= p.max_unexplored_bound as argmax_proven,
        exp(p.candidate_logprobs_nats[1]) > p.unexplored_mass as proven_by_mass,
        p.max_unexplored_bound, p.unexplored_mass, p.n_expanded
    from {{ ref('stg_top1_word_predictions') }} as p
    inner join word_runs as r on r.run_dir = p.run_dir and r.recency = 1
    -- a model whose tokenizer is the game's is compared exactly, never also by words
    where p.model_key not in (select g.model_key from game_tokenizer_runs as g)
),

predictions as (
    select * from exact
    union all by name
    select * from word
)

select
    p.model_key, p.run_id, p.comparison, p.doc_id, p.position, p.status,
    p.status = 'ok' and len(p.candidate_words) > 0 as has_prediction,
    p.candidate_words[1] as predicted,
    p.candidate_logprobs_nats[1] as predicted_logprob_nats,
    exp(p.candidate_logprobs_nats[1]) as predicted_probability,
    case when p.status = 'ok' and len(p.candidate_words) > 0 then p.candidate_words[1] = q.true_token end as is_correct,
    p.candidate_words, p.candidate_logprobs_nats, p.top_first_tokens, p.top_first_token_logprobs_nats,
    p.argmax_proven, p.proven_by_mass, p.max_unexplored_bound, p.unexplored_mass, p.n_expanded
from predictions as p
inner join questions as q on q.doc_id = p.doc_id and q.position = p.position
