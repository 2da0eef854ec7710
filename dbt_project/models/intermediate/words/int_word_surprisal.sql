-- Word surprisal of every word of the corpora with word-level analyses (reading_corpora(): natural_stories,
-- provo, ucl and the user's corpora; not the LM game's) for every complete run, scored or imported: the alignment of
-- the run's tokens to the corpus's own words (stg_words) and ln p_LW / ln p_WT (Oh & Schuler 2024, eqs. 5-6), from
-- macros/word_surprisal.sql (the one definition, also used by the dashboard's sentence box). Imported runs without
-- boundary mass (GPT-3 davinci) get NULL WT.
with reading_tokens as (
    select
        run_id, model_key, corpus, doc_id, token_index, char_start, char_end, logprob_nats,
        logprob_word_initial_nats, logprob_word_initial_after_nats
    from {{ ref('int_token_scores') }}
    where corpus in {{ reading_corpora() }}
),

reading_words as (
    select corpus, doc_id, word_index, word, char_start, char_end
    from {{ ref('stg_words') }}
    where corpus in {{ reading_corpora() }}
),

surprisal as (
    {{ word_surprisal_sql('reading_tokens', 'reading_words') }}
)

select * from surprisal
