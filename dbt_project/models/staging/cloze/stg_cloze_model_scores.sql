-- The model's log-probabilities of the cloze candidates as written by `predictabase cloze`
-- (ingest/scoring/cloze_responses.py): one row per (run, corpus position, candidate). LW = ln p(tokens of
-- ' ' + scored_text | context); ln B before / after the word (Oh & Schuler 2024, eqs. 5-6). Only files of a
-- complete run exist (scores and _run.json are renamed into place together).
with source as (
{{ select_external_or_empty('cloze_model_scores', 'scores', cloze_scores_dir() ~ '/*/*/scores.parquet', [
    ['run_id', 'varchar'], ['model_key', 'varchar'], ['corpus', 'varchar'], ['doc_id', 'varchar'],
    ['word_index', 'integer'], ['candidate_kind', 'varchar'], ['response', 'varchar'], ['scored_text', 'varchar'],
    ['status', 'varchar'], ['context_chars', 'integer'], ['context_tokens', 'integer'], ['n_tokens', 'integer'],
    ['logprob_tokens_nats', 'double'], ['logprob_boundary_before_nats', 'double'],
    ['logprob_boundary_after_nats', 'double'], ['filename', 'varchar']
]) }}
)

select
    * exclude (filename),
    regexp_replace(replace(filename, '\', '/'), '/[^/]*$', '') as run_dir
from source
