-- One row per generator sample x_k (k = 0..399) of a comparison, with log-probabilities (nats).
with source as (
{{ select_source_or_empty('pairwise', 'pairwise_samples') }}
),

renamed as (
    select * from source  -- typed by the source definition; nothing to rename
)

select * from renamed
