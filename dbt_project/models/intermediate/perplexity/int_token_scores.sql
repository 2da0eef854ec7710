-- Token-level scores of COMPLETE runs only. A run is complete when its directory holds `_run.json`
-- (stg_runs); a part file counts only when it sits in that very directory, so the rows of an
-- interrupted or still running job (no `_run.json` yet) are dropped.
--
-- A row is kept when the record of its directory (stg_runs.run_path, the directory's names) has the row's
-- run_id, model_key and corpus: the same rows as an inner join with stg_runs on the directory and the three
-- columns. The complete runs are listed when the view is built (macros/token_lake.sql; `predictabase build`
-- rebuilds it with the marts that read it): the filter is then a comparison with literals of values that
-- are constant within a part file (its directories' names), which DuckDB evaluates once per file rather
-- than once per row as a join would. bench/lake.py: a sum over 10^8 rows, 2.8 s through the join,
-- under 1 s this way (bench/RESULTS.md, "The token lake at scale").
{%- set keys = complete_run_keys(ref('stg_runs')) %}

with token_scores as (
    select * from {{ ref('stg_token_scores') }}
)
{%- if keys is none %},

complete_runs as (
    select map(list(run_path), list({'run_id': run_id, 'model_key': model_key, 'corpus': corpus})) as by_path
    from {{ ref('stg_runs') }}
)
{%- endif %}

select
    t.run_id, t.model_key, t.corpus, t.doc_id, t.token_index, t.token_id, t.token, t.token_text,
    t.char_start, t.char_end, t.logprob_nats, t.surprisal_nats, t.surprisal_bits, t.is_scored,
    t.n_chars, t.n_bytes, t."rank", t.entropy_nats, t.topk_token_ids, t.topk_tokens, t.topk_logprobs_nats,
    t.logprob_word_initial_nats, t.logprob_word_initial_after_nats, t.context_tokens
from token_scores as t
{%- if keys is none %}
cross join complete_runs as r
where r.by_path[t.run_path].run_id = t.run_id
    and r.by_path[t.run_path].model_key = t.model_key
    and r.by_path[t.run_path].corpus = t.corpus
{%- elif keys %}
where {{ token_run_key('t.run_path', 't.run_id', 't.model_key', 't.corpus') }} in (
    {%- for k in keys %}
    '{{ k | replace("'", "''") }}'{{ "," if not loop.last }}
    {%- endfor %}
)
{%- else %}
where false
{%- endif %}
