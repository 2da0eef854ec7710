-- Token-level scores as written: every `part-*.parquet` file of every run directory, complete or
-- not (int_token_scores keeps the complete runs). Adds surprisal (-logprob, nats and bits:
-- bits = nats / ln 2), the UTF-8 byte length of the token's text (DuckDB strlen counts bytes)
-- and the run directory the part file sits in.
with source as (
{{ select_external_or_empty('scores', 'token_scores', token_scores_dir() ~ '/*/*/*/part-*.parquet', [
    ['run_id', 'varchar'], ['model_key', 'varchar'], ['corpus', 'varchar'], ['doc_id', 'varchar'],
    ['token_index', 'integer'], ['token_id', 'integer'], ['token', 'varchar'], ['token_text', 'varchar'],
    ['char_start', 'integer'], ['char_end', 'integer'], ['logprob_nats', 'double'], ['rank', 'integer'],
    ['entropy_nats', 'double'], ['topk_token_ids', 'integer[]'], ['topk_tokens', 'varchar[]'],
    ['topk_logprobs_nats', 'double[]'], ['logprob_word_initial_nats', 'double'],
    ['logprob_word_initial_after_nats', 'double'], ['context_tokens', 'integer'],
    ['filename', 'varchar']
]) }}
),

renamed as (
    select
        run_id, model_key, corpus, doc_id, token_index, token_id, token, token_text,
        char_start, char_end, logprob_nats,
        -logprob_nats as surprisal_nats,
        -logprob_nats / ln(2) as surprisal_bits,
        logprob_nats is not null as is_scored,
        char_end - char_start as n_chars,
        strlen(token_text) as n_bytes,
        "rank", entropy_nats, topk_token_ids, topk_tokens, topk_logprobs_nats,
        logprob_word_initial_nats, logprob_word_initial_after_nats, context_tokens,
        regexp_replace(replace(filename, '\', '/'), '/[^/]*$', '') as run_dir
    from source
)

select * from renamed
