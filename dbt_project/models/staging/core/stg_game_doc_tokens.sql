-- The LM-game documents' GPT-2 token lists (raw.game_doc_tokens), typed.
with source as (
{{ select_source_or_empty('raw', 'game_doc_tokens', [
    ['doc_id', 'varchar'], ['token_index', 'integer'], ['token', 'varchar'],
    ['char_start', 'integer'], ['char_end', 'integer'], ['source_path', 'varchar'], ['source_sha256', 'varchar']
]) }}
),

renamed as (
    select
        doc_id, token_index, token, char_start, char_end, source_path, source_sha256
    from source
)

select * from renamed
