-- Word frequency per corpus word and source (wordfreq, with Natural Stories' Google Books counts; a user corpus's
-- own file), typed (raw.word_frequencies).
with source as (
{{ select_source_or_empty('reading', 'word_frequencies') }}
),

renamed as (
    select * from source  -- typed by the source definition; nothing to rename
)

select * from renamed
