-- The authors' aggregate model top-1 accuracies, one row per (model_perfs*.json file, model), typed.
with source as (
{{ select_source_or_empty('top1', 'top1_reference_accuracies') }}
),

renamed as (
    select * from source  -- typed by the source definition; nothing to rename
)

select * from renamed
