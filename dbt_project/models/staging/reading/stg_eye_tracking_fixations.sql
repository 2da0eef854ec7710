-- One row per upstream fixation (raw.eye_tracking_fixations), typed; every row kept, fixations on no word
-- (word_index NULL) and fixations next to a blink included. Which of them count where is decided in
-- int_eye_tracking_measures.
with source as (
{{ select_source_or_empty('eye_tracking', 'eye_tracking_fixations') }}
),

renamed as (
    select * from source  -- typed by the source definition; nothing to rename
)

select * from renamed
