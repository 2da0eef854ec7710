-- Every complete run, with the run the marts use for each (model_key, corpus) flagged.
--
-- Selection rule: among the complete runs of a (model_key, corpus) whose `limit` is NULL
-- (quick `--limit N` runs never feed the marts), the one that finished last
-- (finished_at, ties broken by run_id) is used. If a (model_key, corpus) has only limited
-- runs, it has no row in the marts.
--
-- vocab_size: the run's own `_run.json` value; where that is NULL (imported runs), the
-- documented reference value from seed `known_vocab_sizes` (GPT-3 davinci: 50257, the GPT-2 BPE).
with runs as (
    select * from {{ ref('stg_runs') }}
),

ranked as (
    select
        *,
        case when run_limit is null then
            row_number() over (
                partition by model_key, corpus, (run_limit is null)
                order by finished_at desc nulls last, run_id desc
            )
        end as unlimited_recency_rank
    from runs
)

select
    r.run_id, r.model_key, r.model_id, r.model_revision, r.tokenizer, r.tokenizer_sha256,
    coalesce(r.vocab_size, k.vocab_size) as vocab_size,
    case when r.vocab_size is not null then 'run' when k.vocab_size is not null then 'reference' end
        as vocab_size_source,
    r.dtype, r.device, r.bos_policy, r.bos_token_id, r.bos_token, r.corpus, r.corpus_version,
    r.context_length, r.stride, r.top_k, r.batch_tokens, r.run_limit, r.full_document,
    r.n_docs, r.n_tokens, r.source, r.started_at, r.finished_at, r.run_dir,
    r.scorer_version, r.end_of_text_ids, r.end_of_text_tokens,
    coalesce(r.unlimited_recency_rank = 1, false) as used_in_marts
from ranked as r
left join {{ ref('known_vocab_sizes') }} as k on k.model_key = r.model_key
