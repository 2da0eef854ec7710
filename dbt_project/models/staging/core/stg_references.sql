-- The works the numbers come from (raw.references, from ingest/sources/references.toml), typed.
with source as (
{{ select_source_or_empty('raw', 'references') }}
),

renamed as (
    select
        "key", kind, datasets, title, authors, author_short, "year", venue, bibtex, source, source_sha256
    from source
)

select * from renamed
