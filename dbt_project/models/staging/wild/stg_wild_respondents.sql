-- One row per respondent. condition: with_model (group A) / without_model (group B).
-- eng_level_code: 1 Native, 2 Proficient, 3 Medium, 4 Basic (upstream README; higher = weaker English).
-- gpt3_familiarity 0-4 and assistants only exist for group A.
with source as (
{{ select_source_or_empty('wild', 'wild_respondents') }}
),

renamed as (
    select * from source  -- typed by the source definition; nothing to rename
)

select * from renamed
