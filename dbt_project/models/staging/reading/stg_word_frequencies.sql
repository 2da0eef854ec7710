-- Word frequency per corpus word (wordfreq; Natural Stories' Google Books counts), typed (raw.word_frequencies).
with source as (
{{ select_source_or_empty('self_paced_reading', 'word_frequencies') }}
),

renamed as (
    select * from source  -- typed by the source definition; nothing to rename
)

select * from renamed
