-- Texts to score (raw.documents), typed.
{{ select_source_or_empty('raw', 'documents', [
    ['corpus', 'varchar'], ['doc_id', 'varchar'], ['doc_index', 'integer'], ['text', 'varchar'],
    ['n_chars', 'bigint'], ['n_bytes', 'bigint'], ['score_prefix_chars', 'integer'],
    ['corpus_version', 'varchar'], ['source_path', 'varchar'], ['source_sha256', 'varchar']
]) }}
