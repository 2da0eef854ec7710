-- One row per corpus of the warehouse (the pages' corpus names and what each corpus has): every corpus raw.corpora
-- declares (stg_corpora: shipped and user-declared) and every corpus with documents or words, with counts of what
-- the warehouse holds for it. A corpus with documents but no raw.corpora row (a warehouse ingested before the
-- job declared_corpora existed) gets its id as title and NULL origin.
with declared as (
    select * from {{ ref('stg_corpora') }}
),

documents as (
    select corpus, count(*) as n_texts from {{ ref('stg_documents') }} group by corpus
),

words as (
    select corpus, count(*) as n_words from {{ ref('stg_words') }} group by corpus
),

word_level as (
    select corpus from {{ reading_corpora() }}
),

measures as (
    select
        corpus,
        list(measure order by case measure {%- for m in reading_measures() %} when '{{ m }}' then {{ loop.index }}
                                           {%- endfor %} else {{ reading_measures() | length + 1 }} end, measure)
            as reading_measures,
        count(*) as n_reading_measures
    from (select distinct corpus, measure from {{ ref('int_reading_word_means') }})
    group by corpus
),

cloze as (
    select corpus, count(*) as n_cloze_words from {{ ref('int_cloze') }} group by corpus
),

frequencies as (
    select corpus, min(frequency_source) as frequency_source from {{ ref('int_reading_words') }} group by corpus
),

runs as (
    select corpus, count(distinct run_id) as n_runs
    from (
        select corpus, run_id from {{ ref('int_runs') }} where used_in_marts
        union
        select corpus, run_id from {{ ref('int_word_surprisal_runs') }} where used_in_marts
    )
    group by corpus
),

corpora as (
    select corpus from declared
    union
    select corpus from documents
    union
    select corpus from words
),

final as (
    select
        c.corpus,
        coalesce(d.title, c.corpus) as title,
        d.language,
        d.origin,
        coalesce(d.is_game, c.corpus = {{ game_corpus() }}) as is_game,
        c.corpus in (select wl.corpus from word_level as wl) as has_word_analyses,
        d.published,
        d.declared_at,
        coalesce(doc.n_texts, 0) as n_texts,
        coalesce(w.n_words, 0) as n_words,
        coalesce(m.reading_measures, cast([] as varchar[])) as reading_measures,
        coalesce(m.n_reading_measures, 0) > 0 as has_reading_times,
        coalesce(cl.n_cloze_words, 0) > 0 as has_cloze,
        coalesce(cl.n_cloze_words, 0) as n_cloze_words,
        f.frequency_source,
        coalesce(r.n_runs, 0) as n_runs,
        d.declaration_sha256, d.source_path, d.source_sha256
    from corpora as c
    left join declared as d using (corpus)
    left join documents as doc using (corpus)
    left join words as w using (corpus)
    left join measures as m using (corpus)
    left join cloze as cl using (corpus)
    left join frequencies as f using (corpus)
    left join runs as r using (corpus)
)

select * from final
order by origin nulls first, corpus
