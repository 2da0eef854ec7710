-- UCL: one row per (model, position, human response word): the human share of the response and the
-- model's probabilities of the same word. Human side: responses with a count > 0 that are words (the
-- empty response, NULL, is excluded, and so is upstream's zero-count 'unk'); the human probability is the
-- raw share c / N_words, N_words = the position's non-empty responses (not upstream's Laplace-smoothed
-- value). Model side: p_WT and p_LW (Oh & Schuler 2024, eqs. 5-6; int_cloze_model_probabilities) and p_WT
-- renormalised over the position's human responses, q(r) = p_WT(r) / sum_r' p_WT(r').
with human as (
    select
        corpus,
        doc_id,
        word_index,
        response,
        response_count,
        cast(sum(response_count) over (partition by corpus, doc_id, word_index) as bigint) as n_responses_words
    from {{ ref('stg_cloze_responses') }}
    where response is not null and response_count > 0
),

model as (
    select *
    from {{ ref('int_cloze_model_probabilities') }}
    where candidate_kind = 'response' and status = 'ok'
)

select
    m.model_key,
    m.run_id,
    h.corpus,
    h.doc_id,
    h.word_index,
    h.response,
    h.response_count,
    h.n_responses_words,
    h.response_count / h.n_responses_words as human_probability,
    m.n_tokens,
    m.probability_wt as model_probability_wt,
    m.probability_lw as model_probability_lw,
    m.probability_wt / sum(m.probability_wt) over (
        partition by m.model_key, h.corpus, h.doc_id, h.word_index
    ) as model_probability_wt_renormalised
from human as h
inner join model as m
    on m.corpus = h.corpus and m.doc_id = h.doc_id and m.word_index = h.word_index and m.response = h.response
