-- Natural Stories' published per-word SPR means (processed_wordinfo.tsv), typed (raw.natural_stories_spr_means).
with source as (
{{ select_source_or_empty('reading', 'natural_stories_spr_means') }}
),

renamed as (
    select 'natural_stories' as corpus, *  -- the file holds Natural Stories only
    from source
)

select * from renamed
