-- Cluster (document) bootstrap of the corpus-level ratio estimators, per run used by the marts.
--
-- Documents are the resampling unit (tokens within a document are not independent). Each of
-- B = var('bootstrap_replicates') replicates draws n_docs documents with replacement and
-- recomputes the ratio estimators on the pooled draw:
--   mean surprisal (nats/token) = sum(total_surprisal_nats) / sum(n_tokens)
--   bits per byte               = sum(total_surprisal_bits) / sum(n_bytes)
-- Token perplexity of a replicate is exp(mean surprisal) (paper 003, PPL = exp(-1/T sum log p)).
-- The 95% interval is the percentile interval (2.5%, 97.5%) over replicates.
--
-- Determinism: draw k of replicate b picks document position (first 60 bits of md5('run_id:b:k')) mod n_docs
-- (documents ordered by doc_id), and the per-document sums are added as DECIMAL(38,12) (exact,
-- so independent of the parallel summation order): the same data always gives the same interval.
{% set B = var('bootstrap_replicates') | int %}
with docs as (
    select
        run_id, doc_id, n_tokens, n_bytes,
        cast(total_surprisal_nats as decimal(38, 12)) as total_surprisal_nats,
        cast(total_surprisal_bits as decimal(38, 12)) as total_surprisal_bits,
        row_number() over (partition by run_id order by doc_id) - 1 as doc_pos,
        count(*) over (partition by run_id) as n_docs
    from {{ ref('int_doc_scores') }}
),
runs as (
    select distinct run_id, n_docs from docs
),
draws as (
    select run_id, n_docs, b, unnest(range(n_docs)) as k
    from runs, range({{ B }}) as reps(b)
),
picks as (
    -- the first 60 bits of md5 as a BIGINT (md5_number() is a UHUGEINT, and UHUGEINT % BIGINT
    -- goes through DOUBLE, which loses the low bits)
    select run_id, b, cast(('0x' || substr(md5(run_id || ':' || b || ':' || k), 1, 15)) as bigint) % n_docs as doc_pos
    from draws
),
replicates as (
    select
        p.run_id, p.b,
        cast(sum(d.total_surprisal_nats) as double) / sum(d.n_tokens) as mean_surprisal_nats,
        cast(sum(d.total_surprisal_bits) as double) / nullif(sum(d.n_bytes), 0) as bits_per_byte
    from picks as p
    inner join docs as d using (run_id, doc_pos)
    group by all
)
select
    run_id,
    count(*) as n_replicates,
    quantile_cont(exp(mean_surprisal_nats), 0.025) as token_perplexity_ci_low,
    quantile_cont(exp(mean_surprisal_nats), 0.975) as token_perplexity_ci_high,
    quantile_cont(mean_surprisal_nats, 0.025) as mean_surprisal_nats_ci_low,
    quantile_cont(mean_surprisal_nats, 0.975) as mean_surprisal_nats_ci_high,
    quantile_cont(bits_per_byte, 0.025) as bits_per_byte_ci_low,
    quantile_cont(bits_per_byte, 0.975) as bits_per_byte_ci_high
from replicates
group by run_id
