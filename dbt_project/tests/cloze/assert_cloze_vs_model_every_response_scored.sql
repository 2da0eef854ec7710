-- Every UCL human response word (count > 0, not the empty response) has the model's probability in each
-- model's run used by the marts: the shared support is the whole human support (no response silently dropped).
with used as (
    select distinct model_key from {{ ref('int_cloze_model_probabilities') }}
),

human as (
    select corpus, doc_id, word_index, response
    from {{ ref('stg_cloze_responses') }}
    where response is not null and response_count > 0
)

select u.model_key, h.*
from used as u
cross join human as h
where not exists (
    select 1 from {{ ref('int_cloze_vs_model_responses') }} as r
    where r.model_key = u.model_key and r.corpus = h.corpus and r.doc_id = h.doc_id
      and r.word_index = h.word_index and r.response = h.response)
