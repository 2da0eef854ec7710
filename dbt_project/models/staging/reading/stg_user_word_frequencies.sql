-- A user corpus's own word frequencies (raw.user_word_frequencies, Zipf scale), typed by the source definition
-- (_user_corpora__sources.yml); nothing to rename.
with source as (
{{ select_source_or_empty('user_corpora', 'user_word_frequencies') }}
),

renamed as (
    select * from source
)

select * from renamed
