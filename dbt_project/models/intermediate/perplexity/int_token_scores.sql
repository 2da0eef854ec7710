-- Token-level scores of COMPLETE runs only. A run is complete when its directory holds `_run.json`
-- (stg_runs); a part file counts only when it sits in that very directory, so the rows of an
-- interrupted or still running job (no `_run.json` yet) are dropped.
with token_scores as (
    select * from {{ ref('stg_token_scores') }}
),

complete_runs as (
    select run_id, model_key, corpus, run_dir from {{ ref('stg_runs') }}
)

select
    t.run_id, t.model_key, t.corpus, t.doc_id, t.token_index, t.token_id, t.token, t.token_text,
    t.char_start, t.char_end, t.logprob_nats, t.surprisal_nats, t.surprisal_bits, t.is_scored,
    t.n_chars, t.n_bytes, t."rank", t.entropy_nats, t.topk_token_ids, t.topk_tokens, t.topk_logprobs_nats,
    t.logprob_word_initial_nats, t.logprob_word_initial_after_nats, t.context_tokens
from token_scores as t
inner join complete_runs as r
    on r.run_id = t.run_id and r.model_key = t.model_key and r.corpus = t.corpus
    and r.run_dir = t.run_dir
