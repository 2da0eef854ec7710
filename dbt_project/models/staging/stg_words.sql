-- Words as each corpus defines them, with spans into documents.text (raw.words), typed.
{{ select_source_or_empty('raw', 'words', [
    ['corpus', 'varchar'], ['doc_id', 'varchar'], ['word_index', 'integer'], ['word', 'varchar'],
    ['char_start', 'integer'], ['char_end', 'integer'], ['native_id', 'varchar'],
    ['source_path', 'varchar'], ['source_sha256', 'varchar']
]) }}
