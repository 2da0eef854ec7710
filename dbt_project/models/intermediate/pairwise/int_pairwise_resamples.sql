-- Which included players each estimate uses. resample_id 0: all of them (the main estimate,
-- whose uncertainty is sigma over questions, Shlegeris et al. 2024, sec. 4.1.3 (1)). resample_id 1..B
-- (var pairwise_bootstrap_resamples, default 100): appendix B's bootstrap, "ignore the entries
-- of a random half of users on each iteration": keep floor(n/2) players, drawn by ranking every
-- player by md5(seed:resample:player) -- a fixed, platform-independent pseudo-random order
-- (var pairwise_bootstrap_seed, default 20221222).
{%- set n_resamples = var('pairwise_bootstrap_resamples', 100) | int %}
{%- set seed = var('pairwise_bootstrap_seed', 20221222) | string %}
with players as (
    select distinct player
    from {{ ref('int_pairwise_players') }}
    where is_included
),

n_players as (
    select count(*) as n from players
),

draws as (
    select
        r.range as resample_id,
        p.player,
        row_number() over (
            partition by r.range
            order by md5('{{ seed }}' || ':' || cast(r.range as varchar) || ':' || p.player), p.player
        ) as draw_rank
    from range(1, {{ n_resamples + 1 }}) as r
    cross join players as p
)

select cast(0 as bigint) as resample_id, player from players
union all
select d.resample_id, d.player
from draws as d
cross join n_players as n
where d.draw_rank <= n.n // 2
