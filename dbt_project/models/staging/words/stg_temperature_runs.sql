-- The complete temperature-scaled scoring runs (`predictabase temperature`, ingest/scoring/temperature.py): one row
-- per `_run.json`. A run of the first N texts only (`limit`) is kept out of every mart.
with source as (
{{ select_external_or_empty('temperature_scores', 'runs', temperature_scores_dir() ~ '/*/*/*/_run.json', [
    ['run_id', 'varchar'], ['model_key', 'varchar'], ['model_id', 'varchar'], ['model_revision', 'varchar'],
    ['tokenizer', 'varchar'], ['corpus', 'varchar'], ['context_length', 'bigint'], ['stride', 'bigint'],
    ['temperatures', 'double[]'], ['limit', 'bigint'], ['n_texts', 'bigint'], ['n_tokens', 'bigint'],
    ['seconds', 'double'], ['finished_at', 'varchar'], ['filename', 'varchar']
]) }}
)

select
    * exclude ("limit", finished_at, filename)
        replace ({{ portable_model_id('model_id') }} as model_id,
                 {{ portable_tokenizer('tokenizer', 'model_id') }} as tokenizer),
    "limit" as run_limit,
    len(temperatures) as n_temperatures,
    try_cast(finished_at as timestamptz) as finished_at,
    regexp_replace(replace(filename, '\', '/'), '/[^/]*$', '') as run_dir
from source
