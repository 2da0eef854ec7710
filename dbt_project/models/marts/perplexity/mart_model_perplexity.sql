-- One row per (model_key, corpus): corpus-level predictive metrics of the run the marts use
-- (int_runs: the latest complete run without --limit). Every metric is CORPUS-WEIGHTED:
-- a sum over all scored tokens of all documents divided by a total count, never a mean of
-- per-document means.
--
-- Equations (the perplexity glossary, and Hao et al. 2020 sec. 3.3.1):
--   T                = n_tokens, tokens with a logprob (the first token of an imported GPT-3
--                      story has none and is not scored)
--   total nats       = -sum_t ln p(x_t | x_<t)
--   PPL (token)      = exp(-(1/T) sum_t ln p(x_t | x_<t)) = exp(total_nats / T)
--   mean surprisal   = total_nats / T  (nats/token), / ln 2 for bits/token
--   BPC              = -(1/C) sum_t log2 p(x_t | x_<t) = total_bits / n_chars
--   BPB              = total_bits / n_bytes  (UTF-8 bytes)
--   word PPL         = exp(total_nats / n_words); bits per word = total_bits / n_words
--                      (= log2 of word perplexity, the perplexity glossary, "Bits per word")
--   normalized PPL   = token PPL / vocab_size (PPL of the uniform model is V, the perplexity glossary)
-- n_chars, n_bytes and n_words count only the scored text (see int_doc_scores).
with runs as (
    select * from {{ ref('int_runs') }} where used_in_marts
),

totals as (
    select
        run_id,
        count(*) as n_docs,
        cast(sum(n_tokens) as bigint) as n_tokens,
        cast(sum(n_words) as bigint) as n_words,
        cast(sum(n_chars) as bigint) as n_chars,
        cast(sum(n_bytes) as bigint) as n_bytes,
        sum(total_surprisal_nats) as total_surprisal_nats,
        sum(total_surprisal_bits) as total_surprisal_bits
    from {{ ref('int_doc_scores') }}
    group by run_id
)

select
    r.model_key,
    r.corpus,
    r.run_id,
    r.model_id,
    r.model_revision,
    r.tokenizer,
    r.source,
    r.vocab_size,
    r.vocab_size_source,
    t.n_docs,
    t.n_tokens,
    t.n_words,
    t.n_chars,
    t.n_bytes,
    t.total_surprisal_nats,
    t.total_surprisal_bits,
    t.total_surprisal_nats / t.n_tokens as mean_surprisal_nats,
    t.total_surprisal_bits / t.n_tokens as mean_surprisal_bits,
    exp(t.total_surprisal_nats / t.n_tokens) as token_perplexity,
    b.token_perplexity_ci_low,
    b.token_perplexity_ci_high,
    b.mean_surprisal_nats_ci_low,
    b.mean_surprisal_nats_ci_high,
    b.n_replicates as bootstrap_replicates,
    t.total_surprisal_bits / nullif(t.n_bytes, 0) as bits_per_byte,
    b.bits_per_byte_ci_low,
    b.bits_per_byte_ci_high,
    t.total_surprisal_bits / nullif(t.n_chars, 0) as bits_per_char,
    case when t.n_words > 0 then exp(t.total_surprisal_nats / t.n_words) end as word_perplexity,
    t.total_surprisal_bits / nullif(t.n_words, 0) as bits_per_word,
    exp(t.total_surprisal_nats / t.n_tokens) / r.vocab_size as normalized_perplexity,
    r.finished_at,
    cast('{{ run_started_at.isoformat() }}' as timestamptz) as built_at
from runs as r
inner join totals as t using (run_id)
left join {{ ref('int_perplexity_bootstrap') }} as b using (run_id)
