-- The recovered counts reproduce upstream's probabilities exactly: p = (c+1)/(N+V) within 1e-12, and N + V
-- responses per context (N = sum of c). Lists every response that does not.
with r as (
    select *, sum(response_count) over (partition by corpus, doc_id, word_index) as n_sum,
           count(*) over (partition by corpus, doc_id, word_index) as v_count
    from {{ ref('stg_cloze_responses') }}
)

select corpus, doc_id, word_index, context, response, probability_laplace, response_count
from r
where abs(probability_laplace - (response_count + 1) / (n_responses_context + n_types_context)) > 1e-12
   or n_sum != n_responses_context or v_count != n_types_context
