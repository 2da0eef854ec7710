-- Catalog files fetched and sha256-verified (raw.source_files), typed.
with source as (
{{ select_source_or_empty('raw', 'source_files') }}
),

renamed as (
    select
        path, dataset, repo, "commit", upstream_path, url, license, citation,
        sha256, bytes, status, origin, fetched_at
    from source
)

select * from renamed
