-- The live top-1 game's questions (int_live_top1_questions): one row per (corpus, doc_id, position), with the
-- true token, where it starts in the document's text (the context is text[:true_char_start]) and, on lm_game,
-- the study's answers to the same question.
select
    corpus,
    doc_id,
    position,
    question_kind,
    true_token,
    true_char_start,
    true_char_end,
    is_word_token,
    is_impossible,
    n_study_answers,
    n_study_correct,
    cast(n_study_correct as double) / nullif(n_study_answers, 0) as study_accuracy
from {{ ref('int_live_top1_questions') }}
