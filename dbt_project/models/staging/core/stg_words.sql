-- Words as each corpus defines them, with spans into documents.text (raw.words), typed.
with source as (
{{ select_source_or_empty('raw', 'words', [
    ['corpus', 'varchar'], ['doc_id', 'varchar'], ['word_index', 'integer'], ['word', 'varchar'],
    ['char_start', 'integer'], ['char_end', 'integer'], ['native_id', 'varchar'],
    ['source_path', 'varchar'], ['source_sha256', 'varchar']
]) }}
),

renamed as (
    select
        corpus, doc_id, word_index, word, char_start, char_end, native_id,
        source_path, source_sha256
    from source
)

select * from renamed
