-- The top-1 prediction runs: one row per `_run.json`. Predictions and record are renamed into
-- place together, so every row is a complete run. model_id and tokenizer are portable
-- (macros/model_identity.sql): a record written before they were names the scoring machine's paths.
with source as (
{{ select_external_or_empty('top1_scores', 'word_runs', top1_predictions_dir() ~ '/*/*/_run.json', [
    ['run_id', 'varchar'], ['model_key', 'varchar'], ['model_id', 'varchar'], ['model_revision', 'varchar'],
    ['tokenizer', 'varchar'], ['tokenizer_sha256', 'varchar'], ['dtype', 'varchar'], ['device', 'varchar'],
    ['method', 'varchar'], ['bos_token_id', 'bigint'], ['bos_token', 'varchar'], ['end_of_text_ids', 'bigint[]'],
    ['corpus_version', 'varchar'], ['choice_set_sha256', 'varchar'], ['n_choice_words', 'bigint'],
    ['n_choice_words_without_path', 'bigint'], ['context_length', 'bigint'], ['predictor_version', 'bigint'],
    ['max_expansions', 'bigint'], ['per_round', 'bigint'], ['n_candidates', 'bigint'], ['n_questions', 'bigint'],
    ['n_expanded', 'bigint'], ['limit', 'bigint'], ['started_at', 'varchar'], ['finished_at', 'varchar'],
    ['seconds', 'double'], ['filename', 'varchar']
]) }}
)

select
    run_id, model_key, {{ portable_model_id('model_id') }} as model_id, model_revision,
    {{ portable_tokenizer('tokenizer', 'model_id') }} as tokenizer, tokenizer_sha256, dtype, device, method,
    bos_token_id, bos_token, end_of_text_ids, corpus_version, choice_set_sha256, n_choice_words,
    n_choice_words_without_path, context_length, predictor_version, max_expansions, per_round, n_candidates,
    n_questions, n_expanded, "limit" as run_limit, try_cast(started_at as timestamptz) as started_at,
    try_cast(finished_at as timestamptz) as finished_at, seconds,
    regexp_replace(replace(filename, '\', '/'), '/[^/]*$', '') as run_dir
from source
