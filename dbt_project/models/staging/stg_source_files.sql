-- Catalog files fetched and sha256-verified (raw.source_files), typed.
{{ select_source_or_empty('raw', 'source_files', [
    ['path', 'varchar'], ['dataset', 'varchar'], ['repo', 'varchar'], ['commit', 'varchar'],
    ['upstream_path', 'varchar'], ['url', 'varchar'], ['license', 'varchar'], ['citation', 'varchar'],
    ['sha256', 'varchar'], ['bytes', 'bigint'], ['status', 'varchar'], ['origin', 'varchar'],
    ['fetched_at', 'timestamptz']
]) }}
