-- Per text (corpus, run, document): the sums of ln p_LW and ln p_WT over its words and the check
-- of Oh & Schuler 2024, sec. 3 ("the joint probability of the entire sequence changes by a factor of the
-- probability of the final trailing whitespace"): sum ln p_WT - sum ln p_LW - ln B(after the last
-- word) = 0, up to float rounding. NULL where some word of the text is not aligned or the run has
-- no boundary mass.
with words as (
    select * from {{ ref('int_word_surprisal') }}
)

select
    run_id, model_key, corpus, doc_id,
    count(*) as n_words,
    count(*) filter (where not is_aligned) as n_unaligned_words,
    sum(logprob_lw_nats) as sum_logprob_lw_nats,
    sum(logprob_wt_nats) as sum_logprob_wt_nats,
    max(logprob_boundary_after_nats) filter (where is_last_word) as logprob_final_boundary_nats,
    case when count(*) filter (where not is_aligned) = 0 then
        sum(logprob_wt_nats) - sum(logprob_lw_nats) - max(logprob_boundary_after_nats) filter (where is_last_word)
    end as telescoping_error_nats
from words
group by all
