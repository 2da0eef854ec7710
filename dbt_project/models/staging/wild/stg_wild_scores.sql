-- One row per 1-5 usefulness rating: rated = model_answer (group A rates GPT-3's answer) or own_answer (group B
-- self-rates).
with source as (
{{ select_source_or_empty('wild', 'wild_scores') }}
),

renamed as (
    select * from source  -- typed by the source definition; nothing to rename
)

select * from renamed
