-- The cloze scoring runs: one row per `_run.json` (every row a complete run). model_id and tokenizer are
-- portable (macros/model_identity.sql): a record written before they were names the scoring machine's paths.
with source as (
{{ select_external_or_empty('cloze_model_scores', 'runs', cloze_scores_dir() ~ '/*/*/_run.json', [
    ['run_id', 'varchar'], ['model_key', 'varchar'], ['model_id', 'varchar'], ['model_revision', 'varchar'],
    ['tokenizer', 'varchar'], ['tokenizer_sha256', 'varchar'], ['dtype', 'varchar'], ['device', 'varchar'],
    ['bos_token_id', 'bigint'], ['bos_token', 'varchar'], ['end_of_text_ids', 'bigint[]'],
    ['scorer_version', 'bigint'], ['inputs_sha256', 'varchar'], ['context_length', 'bigint'],
    ['n_candidates', 'bigint'], ['n_contexts', 'bigint'], ['n_positions', 'bigint'], ['n_nodes', 'bigint'],
    ['n_ok', 'bigint'], ['limit', 'bigint'], ['started_at', 'varchar'], ['finished_at', 'varchar'],
    ['seconds', 'double'], ['filename', 'varchar']
]) }}
)

select
    * exclude ("limit", started_at, finished_at, filename)
        replace ({{ portable_model_id('model_id') }} as model_id,
                 {{ portable_tokenizer('tokenizer', 'model_id') }} as tokenizer),
    "limit" as run_limit,
    try_cast(started_at as timestamptz) as started_at,
    try_cast(finished_at as timestamptz) as finished_at,
    regexp_replace(replace(filename, '\', '/'), '/[^/]*$', '') as run_dir
from source
