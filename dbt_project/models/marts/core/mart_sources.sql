-- One row per dataset of the source catalog: where it comes from and whether every file was
-- verified. A dataset drawn from several upstream repositories lists them all ('; '-joined,
-- commits in the same order as repos).
with files as (
    select * from {{ ref('stg_source_files') }}
),

repos as (
    select distinct dataset, repo, "commit", license, citation from files
)

select
    f.dataset,
    (select string_agg(r.repo, '; ' order by r.repo) from repos as r where r.dataset = f.dataset) as repo,
    (select string_agg(r."commit", '; ' order by r.repo) from repos as r where r.dataset = f.dataset) as "commit",
    (select string_agg(distinct r.license, '; ' order by r.license) from repos as r where r.dataset = f.dataset)
        as license,
    (select string_agg(distinct r.citation, '; ' order by r.citation) from repos as r where r.dataset = f.dataset)
        as citation,
    count(distinct f.repo) as n_repos,
    count(*) as n_files,
    cast(sum(f.bytes) as bigint) as total_bytes,
    count(*) filter (where f.status = 'verified') as n_verified,
    bool_and(coalesce(f.status = 'verified', false)) as all_verified,
    max(f.fetched_at) as last_fetched_at
from files as f
group by f.dataset
