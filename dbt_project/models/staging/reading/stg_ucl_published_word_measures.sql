-- The published UCL per-word reading means (de Varda et al., all_measures.csv), typed.
with source as (
{{ select_source_or_empty('eye_tracking', 'ucl_published_word_measures') }}
),

renamed as (
    select * from source  -- typed by the source definition; nothing to rename
)

select * from renamed
