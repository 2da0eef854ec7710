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
    (select string_agg(repo, '; ' order by repo) from repos r where r.dataset = f.dataset) as repo,
    (select string_agg("commit", '; ' order by repo) from repos r where r.dataset = f.dataset) as "commit",
    (select string_agg(distinct license, '; ' order by license) from repos r where r.dataset = f.dataset) as license,
    (select string_agg(distinct citation, '; ' order by citation) from repos r where r.dataset = f.dataset) as citation,
    count(distinct f.repo) as n_repos,
    count(*) as n_files,
    cast(sum(f.bytes) as bigint) as total_bytes,
    count(*) filter (where f.status = 'verified') as n_verified,
    bool_and(coalesce(f.status = 'verified', false)) as all_verified,
    max(f.fetched_at) as last_fetched_at
from files as f
group by f.dataset
