-- Natural Stories: the per-word means over the rows mart_self_paced_reading keeps (100 < RT < 3000 ms, more than
-- 4 correct answers on the story) must equal processed_wordinfo.tsv meanItemRT and nItem for every word
-- (Futrell et al. 2021, process_RTs.R). Fails on the words that differ (vacuous when either input is absent).
select w.corpus, w.doc_id, w.word_index, w.word, w.mean_rt_ms, w.published_mean_rt_ms, w.n_readers,
    w.published_n_readers
from {{ ref('mart_self_paced_reading_word_means') }} as w
where w.corpus = 'natural_stories'
  and w.published_mean_rt_ms is not null
  and (w.mean_rt_ms is null
       or abs(w.mean_rt_ms - w.published_mean_rt_ms) > 1e-6
       or w.n_readers <> w.published_n_readers)
