-- The 12 task instances: domain (numeric, communication, reasoning, writing), instance 1-3, difficulty 1-3.
with source as (
{{ select_source_or_empty('wild', 'wild_tasks', [
    ['domain', 'varchar'], ['task_index', 'integer'], ['instance', 'integer'], ['item', 'integer'],
    ['difficulty', 'integer'], ['description', 'varchar'], ['source_path', 'varchar'], ['source_sha256', 'varchar']
]) }}
),

renamed as (
    select
        domain, task_index, instance, item, difficulty, description, source_path, source_sha256
    from source
)

select * from renamed
