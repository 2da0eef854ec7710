-- One row per UCL position with a human response distribution: N, V, the entropy of the distribution in bits
-- (Shannon 1948: H = -sum_r p(r) log2 p(r)) over upstream's Laplace-smoothed probabilities (de Varda et al.'s
-- `entropy` is this quantity in nats) and over the raw shares c/N (responses with c > 0; the empty response
-- counts as a response), the modal response (largest count; ties broken alphabetically, the empty response
-- last) and the sum of the smoothed probabilities (1 up to rounding, tested in tests/cloze).
with responses as (
    select
        *,
        row_number() over (
            partition by corpus, doc_id, word_index
            order by response_count desc, response is null, response asc
        ) as rank_in_context,
        max(response_count) over (partition by corpus, doc_id, word_index) as max_count
    from {{ ref('stg_cloze_responses') }}
)

select
    corpus,
    doc_id,
    word_index,
    any_value(context) as context,
    any_value(context_match) as context_match,
    any_value(n_responses_context) as n_responses,
    any_value(n_types_context) as n_types_laplace,
    count(*) filter (where response_count > 0) as n_response_types,
    sum(probability_laplace) as probability_laplace_sum,
    -sum(probability_laplace * log2(probability_laplace)) as entropy_laplace_bits,
    -sum(response_count / n_responses_context * log2(response_count / n_responses_context))
        filter (where response_count > 0) as entropy_raw_bits,
    any_value(response) filter (where rank_in_context = 1) as modal_response,
    max(response_count) as modal_response_count,
    count(*) filter (where response_count = max_count) as n_modal_responses,
    any_value(source_path) as source_path,
    any_value(source_sha256) as source_sha256
from responses
group by corpus, doc_id, word_index
