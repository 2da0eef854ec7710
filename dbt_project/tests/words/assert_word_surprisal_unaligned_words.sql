-- Every word of a reading corpus must be aligned to the tokens of every run that scored its text:
-- its tokens are consecutive and start and end exactly at the word's characters (with its leading
-- whitespace). A word that is not is listed here by id (corpus/doc_id/word_index) with the tokens
-- that cover it; it is never dropped or merged (int_word_surprisal keeps it with NULL surprisals).
select
    w.corpus || '/' || w.doc_id || '/' || w.word_index as word_id,
    w.run_id, w.model_key, w.word, w.span_start, w.span_end, w.n_tokens,
    w.first_token_index, w.last_token_index
from {{ ref('int_word_surprisal') }} as w
where not w.is_aligned
