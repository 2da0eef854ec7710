-- One row per upstream answer: the player's probability (percent) that the TRUE token y is
-- the real next token when shown y against the generator sample x_k.
with source as (
{{ select_source_or_empty('pairwise', 'pairwise_answers') }}
),

renamed as (
    select * from source  -- typed by the source definition; nothing to rename
)

select * from renamed
