-- Catalog files fetched and sha256-verified (raw.source_files), typed.
with source as (
{{ select_source_or_empty('raw', 'source_files', [
    ['path', 'varchar'], ['dataset', 'varchar'], ['repo', 'varchar'], ['commit', 'varchar'],
    ['upstream_path', 'varchar'], ['url', 'varchar'], ['license', 'varchar'], ['citation', 'varchar'],
    ['sha256', 'varchar'], ['bytes', 'bigint'], ['status', 'varchar'], ['origin', 'varchar'],
    ['fetched_at', 'timestamptz']
]) }}
),

renamed as (
    select
        path, dataset, repo, "commit", upstream_path, url, license, citation,
        sha256, bytes, status, origin, fetched_at
    from source
)

select * from renamed
