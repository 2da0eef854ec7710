-- One row per 1-5 usefulness rating: rated = model_answer (group A rates GPT-3's answer) or own_answer (group B self-rates).
with source as (
{{ select_source_or_empty('wild', 'wild_scores', [
    ['respondent_id', 'varchar'], ['condition', 'varchar'], ['domain', 'varchar'], ['instance', 'integer'],
    ['item', 'integer'], ['rated', 'varchar'], ['upstream_field', 'varchar'], ['usefulness_score', 'integer'],
    ['source_path', 'varchar'], ['source_sha256', 'varchar']
]) }}
),

renamed as (
    select
        respondent_id, condition, domain, instance, item, rated, upstream_field, usefulness_score,
        source_path, source_sha256
    from source
)

select * from renamed
