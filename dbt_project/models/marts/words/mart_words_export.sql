-- One row per (corpus, word, run) of the runs the marts use (scored and imported), with everything known about the
-- word beside its surprisal: the table `predictabase export words` pivots and the Word surprisal page downloads.
-- Nothing is computed here that is not defined elsewhere:
--   surprisals and boundary terms: int_word_surprisal_runs (LW; WT = Oh & Schuler 2024, eqs. 5-6), nats and bits;
--   length_chars, zipf_frequency, frequency_source: int_reading_words (the regressions' baseline predictors: the
--     user's frequency file where the corpus has one, else wordfreq);
--   mean_rt_<measure>_ms: int_reading_word_means (the cv_means regressions' dependent variable), NULL where the
--     corpus has no such measure or the word no reading time;
--   cloze_probability, cloze_surprisal_nats: int_cloze (= mart_cloze: the raw share, and -ln of the smoothed
--     probability).
-- The run's settings (model_revision, context_length, stride, dtype) come from int_runs (NULL for imported word
-- surprisals, which have no run of ours); bos_policy only for scored runs (NULL for imports).
with runs as (
    select * from {{ ref('int_word_surprisal_runs') }}
    where used_in_marts
),

settings as (
    select run_id, model_revision, context_length, stride, dtype, bos_policy, source from {{ ref('int_runs') }}
),

corpora as (  -- the corpus's title as mart_corpora gives it: the declared title, else the corpus id (below)
    select corpus, title from {{ ref('stg_corpora') }}
),

predictors as (
    select corpus, doc_id, word_index, length_chars, log_frequency, frequency_source
    from {{ ref('int_reading_words') }}
),

reading as (
    select
        corpus, doc_id, word_index,
        {%- for m in reading_measures() %}
        max(mean_rt_ms) filter (where measure = '{{ m }}') as mean_rt_{{ m }}_ms{{ "," if not loop.last }}
        {%- endfor %}
    from {{ ref('int_reading_word_means') }}
    group by corpus, doc_id, word_index
),

cloze as (
    select corpus, doc_id, word_index, cloze_probability, cloze_surprisal_nats from {{ ref('int_cloze') }}
),

final as (
    select
        r.corpus,
        coalesce(c.title, r.corpus) as corpus_title,
        r.doc_id,
        r.word_index,
        r.native_word_id,
        r.word,
        r.model_key,
        r.model_id,
        s.model_revision,
        r.run_id,
        r.run_source,
        cast(s.context_length as bigint) as context_length,
        cast(s.stride as bigint) as stride,
        s.dtype,
        case when s.source = 'scored' then s.bos_policy end as bos_policy,
        r.surprisal_lw_nats,
        r.surprisal_lw_bits,
        r.surprisal_wt_nats,
        r.surprisal_wt_bits,
        r.logprob_boundary_before_nats,
        r.logprob_boundary_after_nats,
        p.length_chars,
        p.log_frequency as zipf_frequency,
        p.frequency_source,
        {%- for m in reading_measures() %}
        rt.mean_rt_{{ m }}_ms,
        {%- endfor %}
        cl.cloze_probability,
        cl.cloze_surprisal_nats
    from runs as r
    left join settings as s using (run_id)
    left join corpora as c using (corpus)
    left join predictors as p using (corpus, doc_id, word_index)
    left join reading as rt using (corpus, doc_id, word_index)
    left join cloze as cl using (corpus, doc_id, word_index)
)

select * from final
order by corpus, doc_id, word_index, model_key, run_id
