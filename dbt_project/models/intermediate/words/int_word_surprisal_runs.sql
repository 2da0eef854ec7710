-- One row per (corpus, run, word) of the corpora with word-level analyses (reading_corpora(): the shipped
-- reading corpora and the user's): the word's surprisal in both definitions of
-- Oh & Schuler 2024, leading-whitespace (LW) and whitespace-trailing (WT, eqs. 5-6), in nats and bits
-- (bits = nats / ln 2), with the two boundary terms, from int_word_surprisal. Imported runs:
-- GPT-3 davinci on Natural Stories has tokens but no boundary mass upstream, so LW only
-- (definitions = 'LW only'); the UCL precomputed GPT-2 / GPT-Neo word surprisals (Frank et al.'s
-- release, raw.imported_word_surprisal) are carried as given, LW as their authors computed them,
-- and have no row for the first word of a sentence (upstream has none); Pimentel & Meister's 11 models
-- (GPT-2 small to xl, Pythia 70m to 12b) on Natural Stories, Provo and a user corpus declared with their Brown
-- files (published = 'pimentel_meister:brown') carry both definitions as their authors computed them (wordsprobability:
-- WT = their 'surprisal', LW = 'surprisal_buggy'), joined to our words by key; Wilcox et al. 2023's four models on
-- MECO's 11 languages (mGPT with short and long context, their monolingual models on 30M words and on all data) carry
-- their word surprisal as LW (the word's tokens from the one that starts with its space marker, summed: their
-- scripts/get_predictors.py), joined to our words by (trialid, ianum); a text's first word has 0 bits there (no
-- context: they start without BOS). mart_word_surprisal publishes this table; the reading-time regressions read it.
with words as (
    select * from {{ ref('int_word_surprisal') }}
),

runs as (
    select * from {{ ref('int_runs') }}
),

last_words as (
    select corpus, doc_id, max(word_index) as last_word_index from {{ ref('stg_words') }}
    where corpus in {{ reading_corpora() }}
    group by all
),

native as (
    select corpus, doc_id, word_index, native_id from {{ ref('stg_words') }}
    where corpus in {{ reading_corpora() }}
),

scored as (
    select
        w.corpus, w.model_key, r.model_id, w.run_id, r.source as run_source,
        case when r.source = 'scored' and r.scorer_version >= 2 then 'LW and WT' else 'LW only' end as definitions,
        r.used_in_marts,
        array_to_string(r.end_of_text_tokens, ' ') as end_of_text_tokens,
        w.doc_id, w.word_index, n.native_id as native_word_id, w.word,
        w.word_index = 0 as is_first_word, w.is_last_word,
        w.n_tokens, w.is_multitoken, w.is_aligned,
        -w.logprob_lw_nats as surprisal_lw_nats,
        -w.logprob_lw_nats / ln(2) as surprisal_lw_bits,
        -w.logprob_wt_nats as surprisal_wt_nats,
        -w.logprob_wt_nats / ln(2) as surprisal_wt_bits,
        (w.logprob_lw_nats - w.logprob_wt_nats) / ln(2) as surprisal_wt_minus_lw_bits,
        w.logprob_boundary_before_nats, w.logprob_boundary_after_nats
    from words as w
    inner join runs as r on r.run_id = w.run_id and r.model_key = w.model_key and r.corpus = w.corpus
    left join native as n on n.corpus = w.corpus and n.doc_id = w.doc_id and n.word_index = w.word_index
),

imported as (
    -- the imported runs' word surprisals in one shape: UCL's precomputed (bits as given), Pimentel & Meister's
    -- (both definitions, nats), Wilcox et al.'s (LW, bits)
    select corpus, model as model_key, model as model_id, 'ucl-precomputed:' || model as run_id,
           'LW only (as given)' as definitions, doc_id, word_index, is_multitoken,
           surprisal_nats as surprisal_lw_nats, surprisal_bits as surprisal_lw_bits,
           cast(null as double) as surprisal_wt_nats
    from {{ ref('stg_imported_word_surprisal') }}
    union all
    select corpus, model_key, model_id, 'pimentel-meister:' || model_key, 'LW and WT (as given)', doc_id, word_index,
           cast(null as boolean), surprisal_lw_nats, surprisal_lw_nats / ln(2), surprisal_wt_nats
    from {{ ref('stg_pimentel_meister_words') }}
    union all
    select corpus, model_key, upstream_model, 'wilcox-xlang:' || model_key, 'LW only (as given)', doc_id, word_index,
           cast(null as boolean), surprisal_bits * ln(2), surprisal_bits, cast(null as double)
    from {{ ref('stg_wilcox_xlang_words') }}
),

imported_words as (
    select
        i.corpus, i.model_key, i.model_id, i.run_id, 'imported_words' as run_source, i.definitions,
        true as used_in_marts, cast(null as varchar) as end_of_text_tokens,
        i.doc_id, i.word_index, n.native_id as native_word_id, sw.word,
        i.word_index = 0 as is_first_word, i.word_index = lw.last_word_index as is_last_word,
        cast(null as bigint) as n_tokens, i.is_multitoken, cast(null as boolean) as is_aligned,
        i.surprisal_lw_nats, i.surprisal_lw_bits, i.surprisal_wt_nats, i.surprisal_wt_nats / ln(2) as surprisal_wt_bits,
        (i.surprisal_wt_nats - i.surprisal_lw_nats) / ln(2) as surprisal_wt_minus_lw_bits,
        cast(null as double) as logprob_boundary_before_nats, cast(null as double) as logprob_boundary_after_nats
    from imported as i
    inner join {{ ref('stg_words') }} as sw using (corpus, doc_id, word_index)
    inner join last_words as lw using (corpus, doc_id)
    left join native as n using (corpus, doc_id, word_index)
),

all_words as (
    select * from scored
    union all by name
    select * from imported_words
)

select
    corpus, model_key, model_id, run_id, run_source, definitions, used_in_marts, end_of_text_tokens,
    doc_id, word_index, corpus || '/' || doc_id || '/' || word_index as word_id, native_word_id, word,
    is_first_word, is_last_word, n_tokens, is_multitoken, is_aligned,
    surprisal_lw_nats, surprisal_lw_bits, surprisal_wt_nats, surprisal_wt_bits, surprisal_wt_minus_lw_bits,
    logprob_boundary_before_nats, logprob_boundary_after_nats
from all_words
order by corpus, model_key, run_id, doc_id, word_index
