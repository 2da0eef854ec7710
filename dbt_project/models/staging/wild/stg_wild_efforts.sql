-- One row per measured time in seconds. component: prompting (Q1 time to write the prompt: D_H + W_H on a
-- task's first instance, W_H on the others), unwrapping (U_H), validating (V_H), solving (G_H), self_rating.
with source as (
{{ select_source_or_empty('wild', 'wild_efforts', [
    ['respondent_id', 'varchar'], ['condition', 'varchar'], ['domain', 'varchar'], ['instance', 'integer'],
    ['item', 'integer'], ['component', 'varchar'], ['upstream_field', 'varchar'], ['time_s', 'double'],
    ['source_path', 'varchar'], ['source_sha256', 'varchar']
]) }}
),

renamed as (
    select
        respondent_id, condition, domain, instance, item, component, upstream_field, time_s,
        source_path, source_sha256
    from source
)

select * from renamed
