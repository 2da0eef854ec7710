-- The passages the live top-1 game can deal: every document with at least one question, its text and the
-- range of its question positions.
with q as (
    select corpus, doc_id, count(*) as n_questions, min(position) as first_position, max(position) as last_position
    from {{ ref('int_live_top1_questions') }}
    group by corpus, doc_id
)

select q.corpus, q.doc_id, d.doc_index, d.text, q.n_questions, q.first_position, q.last_position
from q
inner join {{ ref('stg_documents') }} as d on d.corpus = q.corpus and d.doc_id = q.doc_id
