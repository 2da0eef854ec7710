-- The complete Monte-Carlo word-entropy runs (`predictabase entropy`, ingest/scoring/anticipation.py): one row per
-- `_run.json`. A run of the first N texts only (`limit`) is kept out of every mart.
with source as (
{{ select_external_or_empty('word_entropy', 'runs', word_entropy_dir() ~ '/*/*/*/_run.json', [
    ['run_id', 'varchar'], ['model_key', 'varchar'], ['model_id', 'varchar'], ['model_revision', 'varchar'],
    ['tokenizer', 'varchar'], ['corpus', 'varchar'], ['samples', 'bigint'], ['alpha', 'double'],
    ['max_tokens', 'bigint'], ['seed', 'bigint'], ['limit', 'bigint'], ['window', 'bigint'], ['n_texts', 'bigint'],
    ['n_words', 'bigint'], ['seconds', 'double'], ['finished_at', 'varchar'], ['filename', 'varchar']
]) }}
)

select
    * exclude ("limit", "window", finished_at, filename)
        replace ({{ portable_model_id('model_id') }} as model_id,
                 {{ portable_tokenizer('tokenizer', 'model_id') }} as tokenizer),
    "limit" as run_limit,
    "window" as context_window_tokens,
    try_cast(finished_at as timestamptz) as finished_at,
    regexp_replace(replace(filename, '\', '/'), '/[^/]*$', '') as run_dir
from source
