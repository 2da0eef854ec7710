-- Texts for browsing: kind = prompt, completion, extracted_answer (group A) or own_answer (group B).
with source as (
{{ select_source_or_empty('wild', 'wild_texts') }}
),

renamed as (
    select * from source  -- typed by the source definition; nothing to rename
)

select * from renamed
