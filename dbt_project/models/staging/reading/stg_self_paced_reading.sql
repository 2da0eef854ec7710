-- Self-paced reading, one row per upstream row (reader x word), typed (raw.self_paced_reading).
with source as (
{{ select_source_or_empty('self_paced_reading', 'self_paced_reading') }}
),

renamed as (
    select * from source  -- typed by the source definition; nothing to rename
)

select * from renamed
