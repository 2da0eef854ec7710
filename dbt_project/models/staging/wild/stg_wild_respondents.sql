-- One row per respondent. condition: with_model (group A) / without_model (group B).
-- eng_level_code: 1 Native, 2 Proficient, 3 Medium, 4 Basic (upstream README; higher = weaker English).
-- gpt3_familiarity 0-4 and assistants only exist for group A.
with source as (
{{ select_source_or_empty('wild', 'wild_respondents', [
    ['respondent_id', 'varchar'], ['condition', 'varchar'], ['group_label', 'varchar'], ['upstream_row', 'varchar'],
    ['session_ids', 'varchar'], ['age_years', 'integer'], ['eng_level', 'varchar'], ['eng_level_code', 'integer'],
    ['gpt3_familiarity', 'integer'], ['assistants_code', 'integer'], ['uses_assistants', 'boolean'],
    ['source_path', 'varchar'], ['source_sha256', 'varchar']
]) }}
),

renamed as (
    select
        respondent_id, condition, group_label, upstream_row, session_ids, age_years, eng_level, eng_level_code,
        gpt3_familiarity, assistants_code, uses_assistants, source_path, source_sha256
    from source
)

select * from renamed
