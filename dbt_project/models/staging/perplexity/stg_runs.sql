-- The run registry: one row per `_run.json` file. The scorer writes `_run.json` only when a run
-- has finished, so every row is a complete run; int_token_scores keeps the token rows of exactly
-- these runs. Timestamps are accepted as ISO-8601 strings or as epoch seconds. model_id and tokenizer are
-- portable (macros/model_identity.sql): a record written before they were names the scoring machine's paths.
-- run_path: the run directory's names `model=<key>/corpus=<c>/run=<id>` as DuckDB reads them as hive partitions
-- of the part files (URL-decoded); int_token_scores matches a token row's directory by it.
with source as (
{{ select_external_or_empty('scores', 'run_registry', token_scores_dir() ~ '/*/*/*/_run.json', [
    ['run_id', 'varchar'], ['model_key', 'varchar'], ['model_id', 'varchar'], ['model_revision', 'varchar'],
    ['tokenizer', 'varchar'], ['tokenizer_sha256', 'varchar'], ['vocab_size', 'bigint'], ['dtype', 'varchar'],
    ['device', 'varchar'], ['bos_policy', 'varchar'], ['bos_token_id', 'bigint'], ['bos_token', 'varchar'],
    ['corpus', 'varchar'], ['corpus_version', 'varchar'], ['context_length', 'bigint'], ['stride', 'bigint'],
    ['top_k', 'bigint'], ['batch_tokens', 'bigint'], ['limit', 'bigint'], ['full', 'boolean'],
    ['n_docs', 'bigint'], ['n_tokens', 'bigint'], ['source', 'varchar'], ['started_at', 'varchar'],
    ['finished_at', 'varchar'], ['package_versions', 'json'], ['scorer_version', 'bigint'],
    ['end_of_text_ids', 'bigint[]'], ['end_of_text_tokens', 'varchar[]'], ['filename', 'varchar']
]) }}
),

parsed as (
    select
        *,
        regexp_extract(
            replace(filename, '\', '/'), '/model=([^/]*)/corpus=([^/]*)/run=([^/]*)/[^/]*$', ['model', 'corpus', 'run']
        ) as dir_names
    from source
),

renamed as (
    select
        run_id, model_key, {{ portable_model_id('model_id') }} as model_id, model_revision,
        {{ portable_tokenizer('tokenizer', 'model_id') }} as tokenizer, tokenizer_sha256, vocab_size, dtype, device,
        bos_policy, bos_token_id, bos_token, corpus, corpus_version, context_length, stride, top_k, batch_tokens,
        "limit" as run_limit, "full" as full_document, n_docs, n_tokens, source,
        coalesce(try_cast(started_at as timestamptz), to_timestamp(try_cast(started_at as double))) as started_at,
        coalesce(try_cast(finished_at as timestamptz), to_timestamp(try_cast(finished_at as double))) as finished_at,
        package_versions, scorer_version, end_of_text_ids, end_of_text_tokens,
        replace(filename, '\', '/') as run_json_path,
        regexp_replace(replace(filename, '\', '/'), '/[^/]*$', '') as run_dir,
        case when dir_names['run'] != '' then
            'model=' || url_decode(dir_names['model']) || '/corpus=' || url_decode(dir_names['corpus'])
            || '/run=' || url_decode(dir_names['run'])
        end as run_path
    from parsed
)

select * from renamed
