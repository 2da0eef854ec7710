-- Per player and subset: how often the player's guess was the true next token (Shlegeris et al. 2024, Figures 1
-- and 2): int_top1_player_accuracy, published as is (mart_live_top1_players reads the int model).
select * from {{ ref('int_top1_player_accuracy') }}
