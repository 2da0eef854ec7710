-- The pairwise game's questions as the live game deals them (Shlegeris et al. 2024, sec. 4.1):
-- int_pairwise_game_questions, published as is (the live marts read the int model; the game page reads this mart).
select * from {{ ref('int_pairwise_game_questions') }}
