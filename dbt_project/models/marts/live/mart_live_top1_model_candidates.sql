-- Each scored model's top candidates for the next token at each live top-1 question: int_live_top1_model_candidates,
-- published as is (mart_live_top1_players reads the int model; the game page reads this mart).
select * from {{ ref('int_live_top1_model_candidates') }}
