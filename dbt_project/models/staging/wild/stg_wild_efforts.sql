-- One row per measured time in seconds. component: prompting (Q1 time to write the prompt: D_H + W_H on a
-- task's first instance, W_H on the others), unwrapping (U_H), validating (V_H), solving (G_H), self_rating.
with source as (
{{ select_source_or_empty('wild', 'wild_efforts') }}
),

renamed as (
    select * from source  -- typed by the source definition; nothing to rename
)

select * from renamed
