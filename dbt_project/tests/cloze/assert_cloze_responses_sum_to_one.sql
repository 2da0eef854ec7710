-- Every UCL context's Laplace-smoothed response probabilities sum to 1 (within 1e-9): the distribution is
-- complete (its 'unk' pseudo-type and the empty response included). Lists the positions that do not.
select corpus, doc_id, word_index, context, probability_laplace_sum
from {{ ref('int_cloze_responses_contexts') }}
where abs(probability_laplace_sum - 1) > 1e-9
