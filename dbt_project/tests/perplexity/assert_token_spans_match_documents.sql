-- Data-quality check (an error: wrong data stops the build): every scored token's token_text must equal the characters
-- of documents.text at [char_start, char_end). Tokens whose document is not (yet) in raw.documents are not checked. A
-- mismatch means char offsets and texts disagree, which would make n_chars / n_words wrong.
select t.run_id, t.corpus, t.doc_id, t.token_index, t.token_text,
       substr(d.text, t.char_start + 1, t.char_end - t.char_start) as text_at_span
from {{ ref('int_token_scores') }} as t
inner join {{ ref('stg_documents') }} as d using (corpus, doc_id)
where t.token_text is distinct from substr(d.text, t.char_start + 1, t.char_end - t.char_start)
