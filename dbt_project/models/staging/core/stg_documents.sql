-- Texts to score (raw.documents), typed.
with source as (
{{ select_source_or_empty('raw', 'documents', [
    ['corpus', 'varchar'], ['doc_id', 'varchar'], ['doc_index', 'integer'], ['text', 'varchar'],
    ['n_chars', 'bigint'], ['n_bytes', 'bigint'], ['score_prefix_chars', 'integer'],
    ['corpus_version', 'varchar'], ['source_path', 'varchar'], ['source_sha256', 'varchar']
]) }}
),

renamed as (
    select
        corpus, doc_id, doc_index, text, n_chars, n_bytes, score_prefix_chars,
        corpus_version, source_path, source_sha256
    from source
)

select * from renamed
