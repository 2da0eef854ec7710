-- Every row of a user corpus's reading times, cloze norms and word frequencies (rows of raw.reading_times,
-- raw.cloze_norms, raw.word_frequencies, the tables of the shipped corpora, whose own loaders join their rows to
-- raw.words) names a word of the corpus (stg_words: corpus, doc_id, word_index). The ingest checks this when a
-- corpus is added; a row that does not join would silently drop out of int_reading_observations,
-- int_reading_word_means, int_reading_words and mart_cloze. Lists each such row with the table it comes from.
-- Passes when a staging view it reads was not built (a build of some domains only).
{%- set missing = namespace(any=false) %}
{%- for parent in [ref('stg_reading_times'), ref('stg_cloze_norms'), ref('stg_word_frequencies'),
                   ref('stg_words'), ref('stg_corpora')] %}
  {%- if relation_is_missing(parent) %}{% set missing.any = true %}{% endif %}
{%- endfor %}
{%- if missing.any %}
{{ missing_relation_passes() }}
{%- else %}
with user_corpora as (
    select corpus from {{ ref('stg_corpora') }} where origin = 'user'
),

user_rows as (
    select 'reading_times' as user_table, corpus, doc_id, word_index from {{ ref('stg_reading_times') }}
    union all
    select 'cloze_norms', corpus, doc_id, word_index from {{ ref('stg_cloze_norms') }}
    union all
    select 'word_frequencies', corpus, doc_id, word_index from {{ ref('stg_word_frequencies') }}
)

select u.*
from user_rows as u
where u.corpus in (select c.corpus from user_corpora as c)
  and not exists (
    select 1 from {{ ref('stg_words') }} as w
    where w.corpus = u.corpus and w.doc_id = u.doc_id and w.word_index = u.word_index
)
{%- endif %}
