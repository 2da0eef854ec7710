-- UCL: a context's human response distribution next to the model's probabilities of the same words
-- (int_cloze_vs_model_responses; the empty response excluded), with each side's rank.
select
    corpus,
    doc_id,
    word_index,
    model_key,
    response,
    response_count,
    n_responses_words,
    human_probability,
    model_probability_wt,
    model_probability_lw,
    model_probability_wt_renormalised,
    n_tokens,
    row_number() over (partition by model_key, corpus, doc_id, word_index order by response_count desc, response asc)
        as human_rank,
    row_number() over (
        partition by model_key, corpus, doc_id, word_index order by model_probability_wt desc, response asc
    )
        as model_rank
from {{ ref('int_cloze_vs_model_responses') }}
