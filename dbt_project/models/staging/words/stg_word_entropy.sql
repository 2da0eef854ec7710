-- Each word's Monte-Carlo entropy, its Rényi entropy and its first-token entropy (nats, with standard errors), of
-- the complete runs of every text (a stopped run's parts and a run of the first N texts are left out).
with source as (
{{ select_external_or_empty('word_entropy', 'words', word_entropy_dir() ~ '/*/*/*/part-*.parquet', [
    ['run_id', 'varchar'], ['model_key', 'varchar'], ['corpus', 'varchar'], ['doc_id', 'varchar'],
    ['word_index', 'integer'], ['n_samples', 'integer'], ['entropy_nats', 'double'], ['entropy_se_nats', 'double'],
    ['renyi_entropy_nats', 'double'], ['renyi_entropy_se_nats', 'double'], ['first_token_entropy_nats', 'double'],
    ['first_token_word_entropy_nats', 'double'],
    ['n_truncated', 'integer'], ['mean_sample_tokens', 'double'], ['context_tokens', 'integer'],
    ['status', 'varchar']
]) }}
),

runs as (
    select run_id, alpha from {{ ref('stg_word_entropy_runs') }} where run_limit is null
)

select
    source.*,
    runs.alpha as renyi_alpha
from source
inner join runs using (run_id)
