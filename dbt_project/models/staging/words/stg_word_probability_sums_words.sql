-- The word-probability-sums diagnostic's words (raw.word_probability_sums_words), typed; empty until the ingest
-- job `word_probability_sums` has run.
with source as (
{{ select_source_or_empty('word_probability_sums', 'word_probability_sums_words') }}
)

select * from source
