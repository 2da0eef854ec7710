-- One row per comparison (question): context c, true token y, log-probabilities of y (nats).
with source as (
{{ select_source_or_empty('pairwise', 'pairwise_questions') }}
),

renamed as (
    select * from source  -- typed by the source definition; nothing to rename
)

select * from renamed
