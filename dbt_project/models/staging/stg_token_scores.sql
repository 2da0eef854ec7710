-- Token-level scores of COMPLETE runs only: rows of a run directory without `_run.json`
-- (an interrupted or running job) are dropped by the join on the run registry.
-- Adds surprisal (-logprob, nats and bits: bits = nats / ln 2) and the UTF-8 byte length of
-- the token's text (DuckDB strlen counts bytes).
with src as (
{{ select_external_or_empty('scores', 'token_scores', token_scores_dir() ~ '/*/*/*/part-*.parquet', [
    ['run_id', 'varchar'], ['model_key', 'varchar'], ['corpus', 'varchar'], ['doc_id', 'varchar'],
    ['token_index', 'integer'], ['token_id', 'integer'], ['token', 'varchar'], ['token_text', 'varchar'],
    ['char_start', 'integer'], ['char_end', 'integer'], ['logprob_nats', 'double'], ['rank', 'integer'],
    ['entropy_nats', 'double'], ['topk_token_ids', 'integer[]'], ['topk_tokens', 'varchar[]'],
    ['topk_logprobs_nats', 'double[]'], ['logprob_word_initial_nats', 'double'], ['context_tokens', 'integer'],
    ['filename', 'varchar']
]) }}
)
select
    t.run_id, t.model_key, t.corpus, t.doc_id, t.token_index, t.token_id, t.token, t.token_text,
    t.char_start, t.char_end, t.logprob_nats,
    -t.logprob_nats as surprisal_nats,
    -t.logprob_nats / ln(2) as surprisal_bits,
    t.logprob_nats is not null as is_scored,
    t.char_end - t.char_start as n_chars,
    strlen(t.token_text) as n_bytes,
    t."rank", t.entropy_nats, t.topk_token_ids, t.topk_tokens, t.topk_logprobs_nats,
    t.logprob_word_initial_nats, t.context_tokens
from src as t
inner join {{ ref('stg_runs') }} as r
    on r.run_id = t.run_id and r.model_key = t.model_key and r.corpus = t.corpus
    -- the part file must sit in the very directory whose _run.json marks the run complete
    and r.run_dir = regexp_replace(replace(t.filename, '\', '/'), '/[^/]*$', '')
