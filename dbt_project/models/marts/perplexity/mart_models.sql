-- One row per complete scoring run (a run directory with `_run.json`), including quick
-- --limit runs; used_in_marts marks the run mart_model_perplexity uses for its
-- (model_key, corpus): the latest complete run without a limit.
select
    run_id, model_key, model_id, model_revision, tokenizer, vocab_size, vocab_size_source,
    dtype, device, bos_policy, bos_token, corpus, context_length, stride, top_k,
    run_limit, full_document, n_docs, n_tokens, source, started_at, finished_at,
    used_in_marts,
    cast('{{ run_started_at.isoformat() }}' as timestamptz) as built_at
from {{ ref('int_runs') }}
