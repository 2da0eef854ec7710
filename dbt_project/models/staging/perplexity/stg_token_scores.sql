-- Token-level scores as written: every `part-*.parquet` file of every run directory, complete or
-- not (int_token_scores keeps the complete runs). Adds surprisal (-logprob, nats and bits:
-- bits = nats / ln 2), the UTF-8 byte length of the token's text (DuckDB strlen counts bytes)
-- and the run directory the part file sits in (run_dir, and run_path: its names, as in stg_runs).
--
-- run_id, model_key and corpus are the names of the part file's directories (hive partitions run,
-- model and corpus: one constant per file, which is what makes a scan of the lake cheap); a part file
-- of the older layout stores run_id and model_key per row, and those are taken as stored. Floats are
-- read as double whether a file stores them as float32 or double (ingest/scoring/store.py).
-- Only while some file of the older layout is in the lake are the stored and the directory's values
-- merged by coalesce(), which makes them per-row values (DuckDB keeps no constant through coalesce): a
-- grouping by model over 10^8 rows then costs seconds, not a fraction (bench/lake.py;
-- store.migrate_part rewrites an older file in the current layout).
{%- set older_files = external_has_column(
    'scores', 'token_scores', token_scores_dir() ~ '/*/*/*/part-*.parquet', 'run_id'
) %}

with source as (
{{ select_external_or_empty('scores', 'token_scores', token_scores_dir() ~ '/*/*/*/part-*.parquet', [
    ['run_id', 'varchar'], ['model_key', 'varchar'], ['corpus', 'varchar'], ['doc_id', 'varchar'],
    ['token_index', 'integer'], ['token_id', 'integer'], ['token', 'varchar'], ['token_text', 'varchar'],
    ['char_start', 'integer'], ['char_end', 'integer'], ['logprob_nats', 'double'], ['rank', 'integer'],
    ['entropy_nats', 'double'], ['topk_token_ids', 'integer[]'], ['topk_tokens', 'varchar[]'],
    ['topk_logprobs_nats', 'double[]'], ['logprob_word_initial_nats', 'double'],
    ['logprob_word_initial_after_nats', 'double'], ['context_tokens', 'integer'],
    ['model', 'varchar'], ['run', 'varchar'], ['filename', 'varchar']
]) }}
),

renamed as (
    select
        {% if older_files -%}
        coalesce(run_id, run) as run_id,
        coalesce(model_key, model) as model_key,
        {%- else -%}
        run as run_id,
        model as model_key,
        {%- endif %}
        corpus, doc_id, token_index, token_id, token, token_text,
        char_start, char_end, logprob_nats,
        -logprob_nats as surprisal_nats,
        -logprob_nats / ln(2) as surprisal_bits,
        logprob_nats is not null as is_scored,
        char_end - char_start as n_chars,
        strlen(token_text) as n_bytes,
        "rank", entropy_nats, topk_token_ids, topk_tokens, topk_logprobs_nats,
        logprob_word_initial_nats, logprob_word_initial_after_nats, context_tokens,
        regexp_replace(replace(filename, '\', '/'), '/[^/]*$', '') as run_dir,
        'model=' || model || '/corpus=' || corpus || '/run=' || run as run_path
    from source
)

select * from renamed
