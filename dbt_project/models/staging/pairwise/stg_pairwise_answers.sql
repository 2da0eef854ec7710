-- One row per upstream answer: the player's probability (percent) that the TRUE token y is
-- the real next token when shown y against the generator sample x_k.
with source as (
{{ select_source_or_empty('pairwise', 'pairwise_answers', [
    ['answer_id', 'bigint'], ['player', 'varchar'], ['comparison_id', 'integer'], ['k', 'integer'],
    ['p_percent', 'double'], ['auto_answered', 'boolean'], ['source_path', 'varchar'], ['source_sha256', 'varchar']
]) }}
),

renamed as (
    select
        answer_id, player, comparison_id, k, p_percent, auto_answered, source_path, source_sha256
    from source
)

select * from renamed
