-- A user corpus's cloze norms (raw.user_cloze_norms: a probability, or counts c of N), typed by the source
-- definition (_user_corpora__sources.yml); nothing to rename.
with source as (
{{ select_source_or_empty('user_corpora', 'user_cloze_norms') }}
),

renamed as (
    select * from source
)

select * from renamed
