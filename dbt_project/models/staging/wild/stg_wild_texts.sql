-- Texts for browsing: kind = prompt, completion, extracted_answer (group A) or own_answer (group B).
with source as (
{{ select_source_or_empty('wild', 'wild_texts', [
    ['respondent_id', 'varchar'], ['condition', 'varchar'], ['domain', 'varchar'], ['instance', 'integer'],
    ['item', 'integer'], ['kind', 'varchar'], ['upstream_field', 'varchar'], ['text', 'varchar'],
    ['source_path', 'varchar'], ['source_sha256', 'varchar']
]) }}
),

renamed as (
    select
        respondent_id, condition, domain, instance, item, kind, upstream_field, text,
        source_path, source_sha256
    from source
)

select * from renamed
