-- Precomputed word surprisals (raw.imported_word_surprisal). The upstream unit is named by
-- the column (surprisal_bits or surprisal_nats); both are exposed, the missing one converted:
-- nats = bits * ln 2.
with source as (
{{ select_source_or_empty('raw', 'imported_word_surprisal') }}
),

renamed as (
    select
        corpus, doc_id, word_index, model,
        coalesce(surprisal_bits, surprisal_nats / ln(2)) as surprisal_bits,
        coalesce(surprisal_nats, surprisal_bits * ln(2)) as surprisal_nats,
        is_multitoken, source_path, source_sha256
    from source
)

select * from renamed
