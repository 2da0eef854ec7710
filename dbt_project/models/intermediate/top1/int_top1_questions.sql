-- The top-1 game's questions: one row per distinct (doc_id, position) any player was asked, with the
-- true token, its flags and the guesses that count (int_top1_guesses.in_analysis).
with guesses as (
    select * from {{ ref('int_top1_guesses') }}
)

select
    doc_id,
    position,
    any_value(true_token) as true_token,
    any_value(true_char_start) as true_char_start,
    any_value(true_char_end) as true_char_end,
    any_value(next_token) as next_token,
    any_value(is_out_of_range) as is_out_of_range,
    any_value(is_impossible) as is_impossible,
    any_value(is_word_token) as is_word_token,
    count(*) as n_guesses,
    count(*) filter (where in_analysis) as n_guesses_in_analysis,
    count(*) filter (where in_analysis and is_correct) as n_correct_in_analysis,
    count(distinct player_id) filter (where in_analysis) as n_players_in_analysis,
    any_value(context_tail) as context_tail
from guesses
group by doc_id, position
