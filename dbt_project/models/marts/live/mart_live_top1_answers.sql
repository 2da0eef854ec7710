-- The live top-1 game's guesses (stg_top1_guesses, source = 'live'), one row per guess, with the true token
-- and whether the guess was it (Shlegeris et al. 2024, sec. 3). The published study's guesses are int_top1_guesses /
-- mart_top1_player_accuracy: the two are never pooled.
select
    g.source,
    g.row_id as answer_id,
    g.player_id,
    p.player_label,
    g.corpus,
    g.doc_id,
    g.position,
    g.guess,
    q.true_token,
    g.guess = q.true_token as is_correct,
    g.source_path,
    g.source_sha256
from {{ ref('stg_top1_guesses') }} as g
inner join {{ ref('int_live_top1_questions') }} as q
    on q.corpus = g.corpus and q.doc_id = g.doc_id and q.position = g.position
left join {{ ref('stg_live_players') }} as p on p.player_id = g.player_id
where g.source = 'live'
