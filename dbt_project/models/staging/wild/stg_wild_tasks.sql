-- The 12 task instances: domain (numeric, communication, reasoning, writing), instance 1-3, difficulty 1-3.
with source as (
{{ select_source_or_empty('wild', 'wild_tasks') }}
),

renamed as (
    select * from source  -- typed by the source definition; nothing to rename
)

select * from renamed
