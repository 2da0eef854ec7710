-- Word-level top-1 predictions as written by `predictabase top1` (ingest/scoring/top1_words.py): one row
-- per (run, word-token question). The candidates are the scored words, most probable first;
-- candidate 1 is the model's prediction. Probabilities: p(w | c) = prod p(tokens) * B(after w)
-- (Oh & Schuler 2024, eqs. 5-6 without the constant 1 / B(c); `logprob_boundary_before_nats` is ln B(c)).
with source as (
{{ select_external_or_empty('top1_scores', 'word_predictions', top1_predictions_dir() ~ '/*/*/predictions.parquet', [
    ['run_id', 'varchar'], ['model_key', 'varchar'], ['doc_id', 'varchar'], ['position', 'integer'],
    ['true_char_start', 'integer'], ['status', 'varchar'], ['context_tokens', 'integer'],
    ['logprob_boundary_before_nats', 'double'], ['candidate_words', 'varchar[]'],
    ['candidate_logprobs_nats', 'double[]'], ['candidate_token_counts', 'integer[]'],
    ['top_first_tokens', 'varchar[]'], ['top_first_token_logprobs_nats', 'double[]'], ['n_expanded', 'integer'],
    ['max_unexplored_bound', 'double'], ['unexplored_mass', 'double'], ['filename', 'varchar']
]) }}
)

select
    run_id, model_key, doc_id, position, true_char_start, status, context_tokens,
    logprob_boundary_before_nats, candidate_words, candidate_logprobs_nats, candidate_token_counts,
    top_first_tokens, top_first_token_logprobs_nats,
    n_expanded, max_unexplored_bound, unexplored_mass,
    regexp_replace(replace(filename, '\', '/'), '/[^/]*$', '') as run_dir
from source
