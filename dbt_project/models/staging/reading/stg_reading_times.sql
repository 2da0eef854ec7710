-- Every corpus's reading times (raw.reading_times): per reader and word (the shipped self-paced reading, a user's
-- per-reader file) or per-word means (reader_id NULL: a user's file of means), typed by the source definition;
-- nothing to rename.
with source as (
{{ select_source_or_empty('reading', 'reading_times') }}
),

renamed as (
    select * from source
)

select * from renamed
