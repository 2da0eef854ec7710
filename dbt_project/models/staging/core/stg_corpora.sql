-- The corpora of the warehouse (raw.corpora: shipped and user-declared), typed by the source definition
-- (_user_corpora__sources.yml); nothing to rename.
with source as (
{{ select_source_or_empty('user_corpora', 'corpora') }}
),

renamed as (
    select * from source
)

select * from renamed
