-- The live top-1 game's questions: what a player can be asked, one row per (corpus, doc_id, position).
--   lm_game: the study's own questions (int_top1_questions, every position a player of the LM game was asked,
--            past-the-end rows out), in document order: the true token is the game document's GPT-2 token.
--   any other corpus (shipped or a user's): the words that are a single GPT-2 token of the game's vocabulary,
--            asked as that token, ' ' + word: a word of letters only (regexp '^\p{L}+$') preceded by a space in
--            the text. The game's vocabulary has no tokenizer to split other text into GPT-2 tokens, so only
--            these word-token questions are asked there (Shlegeris et al.'s (2024) word-token subset, sec. 3.3);
--            position = word_index + 1.
with study as (
    select
        {{ game_corpus() }} as corpus, doc_id, position, 'study_position' as question_kind, true_token, true_char_start,
        true_char_end, is_word_token, is_impossible, n_guesses_in_analysis as n_study_answers,
        n_correct_in_analysis as n_study_correct
    from {{ ref('int_top1_questions') }}
    where not is_out_of_range
),

vocab as (
    select distinct token from {{ ref('stg_game_vocabulary') }}
),

words as (
    select w.corpus, w.doc_id, w.word_index, w.word, w.char_start, w.char_end, d.text
    from {{ ref('stg_words') }} as w
    inner join {{ ref('stg_documents') }} as d on d.corpus = w.corpus and d.doc_id = w.doc_id
    where w.corpus <> {{ game_corpus() }}
),

word_questions as (
    select
        w.corpus, w.doc_id, w.word_index + 1 as position, 'word_token' as question_kind, ' ' || w.word as true_token,
        w.char_start - 1 as true_char_start, w.char_end as true_char_end, true as is_word_token,
        false as is_impossible, cast(0 as bigint) as n_study_answers, cast(0 as bigint) as n_study_correct
    from words as w
    inner join vocab as v on v.token = ' ' || w.word
    where w.char_start >= 1
        and substring(w.text, w.char_start, 1) = ' '  -- the character before the word (1-based substring)
        and regexp_matches(w.word, '^\p{L}+$')
)

select * from study
union all
select * from word_questions
