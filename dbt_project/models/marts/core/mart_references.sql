-- One row per work the warehouse's numbers come from (papers, datasets, models; ingest/sources/references.toml):
-- what each dashboard page's "How to cite" lists and its BibTeX download holds. `citation` is the work on one
-- line, "Authors (year). Title. Venue." (a part the entry lacks is left out).
with refs as (
    select * from {{ ref('stg_references') }}
),

final as (
    select
        "key",
        kind,
        title,
        authors,
        "year",
        venue,
        datasets,
        bibtex,
        concat_ws('. ',
            case
                when author_short is not null and "year" is not null then author_short || ' (' || "year" || ')'
                else coalesce(author_short, cast("year" as varchar))
            end,
            title,
            venue
        ) || '.' as citation
    from refs
)

select * from final
