-- One row per upstream row of the top-1 game (res_accuracy_anonym.json), typed. The true token is not
-- here: it is joined from the document in int_top1_guesses (correct_answer_upstream is a front-end bug).
with source as (
{{ select_source_or_empty('top1', 'top1_guesses') }}
),

renamed as (
    select * from source  -- typed by the source definition; nothing to rename
)

select * from renamed
