-- Each token's log-probability and the word-boundary mass before and after it under softmax(logits / T), per
-- temperature T of the run's grid (nats), of the complete runs of every text (a stopped run's parts and a run of the
-- first N texts are left out).
with source as (
{{ select_external_or_empty('temperature_scores', 'tokens', temperature_scores_dir() ~ '/*/*/*/part-*.parquet', [
    ['run_id', 'varchar'], ['model_key', 'varchar'], ['corpus', 'varchar'], ['doc_id', 'varchar'],
    ['token_index', 'integer'], ['char_start', 'integer'], ['char_end', 'integer'], ['temperature', 'double'],
    ['logprob_nats', 'double'], ['logprob_word_initial_nats', 'double'], ['logprob_word_initial_after_nats', 'double']
]) }}
),

runs as (
    select run_id from {{ ref('stg_temperature_runs') }} where run_limit is null
)

select source.*
from source
inner join runs using (run_id)
