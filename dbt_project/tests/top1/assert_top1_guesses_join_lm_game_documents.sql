-- Every guess row of the top-1 game refers to a document of corpus lm_game (raw.documents: the context
-- is read from its text, so context_tail is NULL without it) that has its GPT-2 tokens
-- (raw.game_doc_tokens: n_doc_tokens = 0 without them). Reads int_top1_guesses only, so selecting
-- another domain (tag:core) never pulls this test in.
select row_id, doc_id
from {{ ref('int_top1_guesses') }}
where n_doc_tokens = 0 or context_tail is null
