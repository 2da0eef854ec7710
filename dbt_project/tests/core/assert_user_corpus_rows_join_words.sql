-- Every row of a user corpus's reading times, and of every corpus's cloze norms and word frequencies, names a word of
-- the corpus
-- (stg_words: corpus, doc_id, word_index). The ingest checks this when a corpus is added; a row that does not
-- join would silently drop out of int_reading_observations, int_reading_word_means, int_reading_words and
-- mart_cloze. Lists each such row with the table it comes from. Passes when a staging view it reads was not built
-- (a build of some domains only: the user tables' views belong to reading and cloze).
{%- set missing = namespace(any=false) %}
{%- for parent in [ref('stg_user_reading_times'), ref('stg_cloze_norms'), ref('stg_word_frequencies'),
                   ref('stg_words')] %}
  {%- if relation_is_missing(parent) %}{% set missing.any = true %}{% endif %}
{%- endfor %}
{%- if missing.any %}
{{ missing_relation_passes() }}
{%- else %}
with user_rows as (
    select 'user_reading_times' as user_table, corpus, doc_id, word_index from {{ ref('stg_user_reading_times') }}
    union all
    -- every corpus's cloze norms (the shipped ones are joined to raw.words at ingest too)
    select 'cloze_norms', corpus, doc_id, word_index from {{ ref('stg_cloze_norms') }}
    union all
    select 'word_frequencies', corpus, doc_id, word_index from {{ ref('stg_word_frequencies') }}
)

select u.*
from user_rows as u
where not exists (
    select 1 from {{ ref('stg_words') }} as w
    where w.corpus = u.corpus and w.doc_id = u.doc_id and w.word_index = u.word_index
)
{%- endif %}
