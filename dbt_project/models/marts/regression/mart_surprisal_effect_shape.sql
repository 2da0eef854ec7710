-- The linking function between surprisal and reading time: per (corpus, measure, run, definition) and 1-bit
-- surprisal bin, the mean of the per-word mean reading times (int_reading_word_means, skips never 0 ms) of the
-- words whose surprisal falls in the bin, with a 95% normal interval over words (mean +- 1.96 sd / sqrt(n);
-- few_words marks bins of fewer than 30 words, where it is too narrow). Bins: [k, k + 1) bits, k = 0 .. 19,
-- and 20 bits or more pooled. Only words that enter the regressions (the exclusions of int_reading_observations).
with means as (
    select * from {{ ref('int_reading_word_means') }}
),

surprisal as (
    select corpus, model_key, run_id, run_source, definition, doc_id, word_index,
        surprisal_nats / ln(2) as surprisal_bits
    from {{ ref('int_reading_surprisal') }}
),

binned as (
    select
        m.corpus, m.measure, s.model_key, s.run_id, s.run_source, s.definition,
        least(floor(s.surprisal_bits), 20)::int as bin_low_bits, s.surprisal_bits, m.mean_rt_ms
    from means as m
    inner join surprisal as s using (corpus, doc_id, word_index)
),

aggregated as (
    select
        corpus, measure, model_key, run_id, run_source, definition, bin_low_bits,
        count(*) as n_words,
        avg(surprisal_bits) as mean_surprisal_bits,
        avg(mean_rt_ms) as mean_rt_ms,
        stddev_samp(mean_rt_ms) as sd_rt_ms
    from binned
    group by all
)

select
    corpus, measure, model_key, run_id, run_source, definition,
    bin_low_bits, case when bin_low_bits = 20 then null else bin_low_bits + 1 end as bin_high_bits,
    n_words, n_words < 30 as few_words, mean_surprisal_bits, mean_rt_ms,
    mean_rt_ms - 1.96 * sd_rt_ms / sqrt(n_words) as mean_rt_ci_low_ms,
    mean_rt_ms + 1.96 * sd_rt_ms / sqrt(n_words) as mean_rt_ci_high_ms
from aggregated
order by corpus, measure, model_key, run_id, definition, bin_low_bits
