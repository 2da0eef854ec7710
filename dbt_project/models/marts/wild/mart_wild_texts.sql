-- One row per (respondent, task instance) for the dashboard's browser: the prompt, GPT-3's completion
-- and the extracted answer (group A) or the respondent's own answer (group B), with the rating, its
-- loss and the measured times. Plaintext lives only in the warehouse and its published snapshot.
with t as (
    select respondent_id, item, {{ pivot_columns('max', 'kind', 'text', {
        'prompt': 'prompt_text', 'completion': 'completion_text', 'extracted_answer': 'extracted_answer_text',
        'own_answer': 'own_answer_text'}) }}
    from {{ ref('stg_wild_texts') }}
    group by all
),

e as (
    select respondent_id, item, {{ pivot_columns('max', 'component', 'time_s', {
        'prompting': 'prompting_s', 'unwrapping': 'unwrapping_s', 'validating': 'validating_s',
        'solving': 'solving_s', 'self_rating': 'self_rating_s'}) }}
    from {{ ref('stg_wild_efforts') }}
    group by all
)

select
    l.respondent_id,
    l.condition,
    l.domain,
    l.instance,
    l.item,
    l.difficulty,
    r.age_years,
    r.eng_level,
    r.gpt3_familiarity,
    t.prompt_text,
    t.completion_text,
    t.extracted_answer_text,
    t.own_answer_text,
    l.usefulness_score,
    l.loss,
    e.prompting_s,
    e.unwrapping_s,
    e.validating_s,
    e.solving_s,
    e.self_rating_s
from {{ ref('int_wild_losses') }} as l
inner join {{ ref('stg_wild_respondents') }} as r using (respondent_id)
left join t using (respondent_id, item)
left join e using (respondent_id, item)
