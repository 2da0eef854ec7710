-- The model's whole-word probabilities of the cloze candidates, from each model's latest complete run
-- over every document (runs with --limit never feed the marts). Oh & Schuler 2024: p_LW = exp(LW) (eq. 5, the
-- leading-whitespace word probability, sum of the token log-probabilities of ' ' + word) and
-- p_WT = exp(LW + ln B(after) - ln B(before)) (eq. 6, whitespace-trailing: the boundary after the word is
-- part of it, the boundary before it is not).
with runs as (
    select
        run_id,
        row_number() over (partition by model_key order by finished_at desc nulls last, run_id desc) as recency
    from {{ ref('stg_cloze_model_runs') }}
    where run_limit is null
)

select
    s.model_key,
    s.run_id,
    s.corpus,
    s.doc_id,
    s.word_index,
    s.candidate_kind,
    s.response,
    s.scored_text,
    s.status,
    s.context_chars,
    s.n_tokens,
    s.logprob_tokens_nats,
    s.logprob_boundary_before_nats,
    s.logprob_boundary_after_nats,
    s.logprob_tokens_nats + s.logprob_boundary_after_nats - s.logprob_boundary_before_nats as logprob_wt_nats,
    exp(s.logprob_tokens_nats) as probability_lw,
    exp(s.logprob_tokens_nats + s.logprob_boundary_after_nats - s.logprob_boundary_before_nats) as probability_wt
from {{ ref('stg_cloze_model_scores') }} as s
inner join runs as r on r.run_id = s.run_id and r.recency = 1
