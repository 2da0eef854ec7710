-- A user corpus's reading times (raw.user_reading_times: per reader, or per-word means with reader_id NULL),
-- typed by the source definition (_user_corpora__sources.yml); nothing to rename.
with source as (
{{ select_source_or_empty('user_corpora', 'user_reading_times') }}
),

renamed as (
    select * from source
)

select * from renamed
