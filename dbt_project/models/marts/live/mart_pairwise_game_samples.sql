-- The 400 generator samples x_k of each question of the pairwise game, with ln g(x_k|c): int_pairwise_game_samples,
-- published as is (the live marts read the int model; the game page reads this mart).
select * from {{ ref('int_pairwise_game_samples') }}
