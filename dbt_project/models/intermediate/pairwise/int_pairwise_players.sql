-- Which players count (Shlegeris et al. 2024, sec. 4.1: "19 participants answered all 40 questions of the
-- first set, and 11 participants answered all 80 questions of the second set").
-- Rule: a player counts for a question set exactly when they answered EVERY question of that
-- set EXACTLY ONCE (n_answers = n_distinct_questions = questions in the set). Their answers to
-- that set are then used; answers to a set they did not complete, and training answers, are not.
-- `meets_authors_count_rule` is the authors' literal implementation (row count = set size), kept
-- for comparison: it would also admit a player with a duplicate answer and a missing question.
with set_questions as (
    select question_set, count(*) as n_set_questions
    from {{ ref('stg_pairwise_questions') }}
    where question_set in ('set_1', 'set_2')
    group by question_set
),

per_player as (
    select
        a.player,
        q.question_set,
        count(*) as n_answers,
        count(distinct a.comparison_id) as n_distinct_questions
    from {{ ref('stg_pairwise_answers') }} as a
    inner join {{ ref('stg_pairwise_questions') }} as q on q.comparison_id = a.comparison_id
    where q.question_set in ('set_1', 'set_2')
        and a.source = 'study'  -- the study's players; live players: mart_pairwise_player_perplexity
    group by a.player, q.question_set
)

select
    p.player,
    p.question_set,
    p.n_answers,
    p.n_distinct_questions,
    s.n_set_questions,
    p.n_answers = s.n_set_questions as meets_authors_count_rule,
    (p.n_answers = s.n_set_questions and p.n_distinct_questions = s.n_set_questions) as is_included
from per_player as p
inner join set_questions as s on s.question_set = p.question_set
