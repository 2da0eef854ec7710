-- One row per (corpus, run, word) of the reading corpora, LW and WT surprisal (Oh & Schuler 2024):
-- int_word_surprisal_runs (every scored and imported run; the definitions and the imports are described there),
-- published as is.
select * from {{ ref('int_word_surprisal_runs') }}
