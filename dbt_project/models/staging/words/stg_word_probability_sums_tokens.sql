-- The word-probability-sums diagnostic's token rows (raw.word_probability_sums_tokens), typed; empty until the
-- ingest job `word_probability_sums` has run.
with source as (
{{ select_source_or_empty('word_probability_sums', 'word_probability_sums_tokens') }}
)

select * from source
