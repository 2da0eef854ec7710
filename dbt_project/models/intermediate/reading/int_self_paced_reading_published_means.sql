-- Published per-word self-paced reading means, keyed like raw.words (one row per corpus word that has one):
--   natural_stories: processed_wordinfo.tsv meanItemRT / nItem (Futrell et al. 2021, process_RTs.R: readers'
--     RTs with 100 < RT < 3000 ms of readers with more than 4 of 6 comprehension answers correct on the story);
--   ucl: all_measures.csv self_paced_reading_time (de Varda et al. 2023, merge_with_behavioral_data.py: the plain
--     mean RT over all readers of Frank et al.'s selfpacedreading.RT.txt, no exclusion; n readers not published).
with ns as (
    select m.*, w.word_index
    from {{ ref('stg_natural_stories_spr_means') }} as m
    inner join {{ ref('stg_words') }} as w
        on w.corpus = 'natural_stories' and w.doc_id = m.doc_id and w.native_id = m.native_id
),

ucl as (
    select * from {{ ref('stg_ucl_published_word_measures') }}
    where self_paced_reading_time_ms is not null
)

select
    'natural_stories' as corpus, doc_id, word_index, word,
    mean_rt_ms as published_mean_rt_ms,
    n_readers as published_n_readers,
    'natural_stories/naturalstories_RTS/processed_wordinfo.tsv meanItemRT' as published_source
from ns
union all
select
    corpus, doc_id, word_index, word,
    self_paced_reading_time_ms as published_mean_rt_ms,
    cast(null as integer) as published_n_readers,
    'ucl_devarda/all_measures.csv self_paced_reading_time' as published_source
from ucl
