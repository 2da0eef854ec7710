-- Cluster (document) bootstrap of the corpus-level ratio estimators, per run used by the marts.
--
-- Documents are the resampling unit (tokens within a document are not independent). Each of
-- B = var('bootstrap_replicates') replicates draws n_docs documents with replacement and
-- recomputes the ratio estimators on the pooled draw:
--   mean surprisal (nats/token) = sum(total_surprisal_nats) / sum(n_tokens)
--   bits per byte               = sum(total_surprisal_bits) / sum(n_bytes)
-- Token perplexity of a replicate is exp(mean surprisal) (the perplexity glossary, PPL = exp(-1/T sum log p)).
-- The 95% interval is the percentile interval (2.5%, 97.5%) over replicates.
--
-- Determinism: draw k of replicate b picks document position (first 60 bits of md5('run_id:b:k')) mod n_docs
-- (documents ordered by doc_id), and the per-document sums are added as DECIMAL(38,12) (exact,
-- so independent of the parallel summation order): the same data always gives the same interval.
--
-- Cost (bench/lake.py): linear in documents x B, one md5 per draw. The draws and their
-- values are unchanged; only their arithmetic is cheaper (9.5M draws: 3.3 -> 1.9 s of CPU, 2.0 -> 1.0 s):
-- the text 'run_id:b:k' is one concat() of run_id and the texts of b and k, each made once per
-- replicate / document position (no integer-to-text cast per draw), the first 60 bits are read from
-- md5_number (the digest read little-endian: its low 8 bytes byte-swapped, then >> 4) instead of from
-- hex text, and the joins and groups use an integer run number instead of the run_id text (a NULL
-- run_id gets no interval, as before).
{% set B = var('bootstrap_replicates') | int %}
with docs as (
    select
        run_id, doc_id, n_tokens, n_bytes,
        cast(total_surprisal_nats as decimal(38, 12)) as total_surprisal_nats,
        cast(total_surprisal_bits as decimal(38, 12)) as total_surprisal_bits,
        row_number() over (partition by run_id order by doc_id) - 1 as doc_pos,
        count(*) over (partition by run_id) as n_docs,
        dense_rank() over (order by run_id) as run_no
    from {{ ref('int_doc_scores') }}
),

runs as (
    select distinct run_id, run_no, n_docs from docs where run_id is not null
),

draws as (
    -- draw k of replicate b, with b and k as text made once (per replicate, per document position)
    select r.run_no, r.n_docs, reps.b, r.run_id, reps.b_text, unnest(r.k_texts) as k_text
    from (select *, cast(range(n_docs) as varchar[]) as k_texts from runs) as r,
        (select b, cast(b as varchar) as b_text from range({{ B }}) as reps (b)) as reps
),

picks as (
    -- the first 60 bits of md5 as a BIGINT: x = the digest's first 8 bytes read little-endian
    -- (md5_number's low 64 bits), byte-swapped to read them big-endian, >> 4. (md5_number() % BIGINT
    -- itself would go through DOUBLE, which loses the low bits.)
    select run_no, b, cast(((
        ((x & 255) << 56) | (((x >> 8) & 255) << 48) | (((x >> 16) & 255) << 40) | (((x >> 24) & 255) << 32)
        | (((x >> 32) & 255) << 24) | (((x >> 40) & 255) << 16) | (((x >> 48) & 255) << 8) | (x >> 56)
    ) >> 4) as bigint) % n_docs as doc_pos
    from (
        select run_no, b, n_docs,
            cast(
                md5_number(concat(run_id, ':', b_text, ':', k_text)) & cast(18446744073709551615 as uhugeint) as ubigint
            ) as x
        from draws
    ) as hashed
),

replicates as (
    select
        p.run_no, p.b,
        cast(sum(d.total_surprisal_nats) as double) / sum(d.n_tokens) as mean_surprisal_nats,
        cast(sum(d.total_surprisal_bits) as double) / nullif(sum(d.n_bytes), 0) as bits_per_byte
    from picks as p
    inner join docs as d using (run_no, doc_pos)
    group by all
)

select
    r.run_id,
    count(*) as n_replicates,
    quantile_cont(exp(rep.mean_surprisal_nats), 0.025) as token_perplexity_ci_low,
    quantile_cont(exp(rep.mean_surprisal_nats), 0.975) as token_perplexity_ci_high,
    quantile_cont(rep.mean_surprisal_nats, 0.025) as mean_surprisal_nats_ci_low,
    quantile_cont(rep.mean_surprisal_nats, 0.975) as mean_surprisal_nats_ci_high,
    quantile_cont(rep.bits_per_byte, 0.025) as bits_per_byte_ci_low,
    quantile_cont(rep.bits_per_byte, 0.975) as bits_per_byte_ci_high
from replicates as rep
-- not the `runs` CTE: referenced twice, DuckDB would materialize it, and its few rows would then feed
-- the whole draws pipeline from one thread (measured: 2x the wall time on 2 cores)
inner join (select distinct run_id, run_no from docs) as r using (run_no)
group by r.run_id
