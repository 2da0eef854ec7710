-- Every guess row of the top-1 game refers to a document of corpus lm_game (raw.documents), which
-- has its GPT-2 tokens (raw.game_doc_tokens).
select g.row_id, g.doc_id
from {{ ref('stg_top1_guesses') }} as g
left join {{ ref('stg_documents') }} as d on d.corpus = 'lm_game' and d.doc_id = g.doc_id
where d.doc_id is null
   or not exists (select 1 from {{ ref('stg_game_doc_tokens') }} as t where t.doc_id = g.doc_id)
