-- Calibration of a model against human cloze probabilities: words binned by their human cloze probability,
-- with the model's mean probability of the same words in each bin (WT and LW, Oh & Schuler 2024). Words:
--   UCL: every human response word of every position (human probability = raw share c / N_words, the empty
--        response excluded), and the true word where no one gave it (human probability 0);
--   Provo: the true word of every position with norms (human probability = the published cp, a raw share).
-- Bins: bin 0 = exactly 0; bin k = (0.1 (k-1), 0.1 k] for k = 1..10.
with ucl_responses as (
    select model_key, corpus, doc_id, word_index, response as word, human_probability,
           model_probability_wt, model_probability_lw
    from {{ ref('int_cloze_vs_model_responses') }}
),

ucl_unseen_true as (
    select t.model_key, t.corpus, t.doc_id, t.word_index, t.scored_text as word, 0.0 as human_probability,
           t.probability_wt as model_probability_wt, t.probability_lw as model_probability_lw
    from {{ ref('int_cloze_model_probabilities') }} as t
    where t.corpus in {{ cloze_corpora('responses') }} and t.candidate_kind = 'true_word' and t.status = 'ok'
      and not exists (
          select 1 from ucl_responses as r
          where r.model_key = t.model_key and r.corpus = t.corpus and r.doc_id = t.doc_id
            and r.word_index = t.word_index and r.word = lower(t.scored_text))
      and exists (
          select 1 from ucl_responses as r
          where r.model_key = t.model_key and r.corpus = t.corpus and r.doc_id = t.doc_id
            and r.word_index = t.word_index)
),

provo_true as (
    select t.model_key, t.corpus, t.doc_id, t.word_index, t.scored_text as word,
           n.cloze_probability_published as human_probability,
           t.probability_wt as model_probability_wt, t.probability_lw as model_probability_lw
    from {{ ref('int_cloze_model_probabilities') }} as t
    inner join {{ ref('int_cloze_norms') }} as n
        on n.corpus = t.corpus and n.doc_id = t.doc_id and n.word_index = t.word_index
    where t.corpus in {{ cloze_corpora('published_probabilities') }}
        and t.candidate_kind = 'true_word' and t.status = 'ok'
),

words as (
    select * from ucl_responses
    union all
    select * from ucl_unseen_true
    union all
    select * from provo_true
),

binned as (
    select
        *,
        case when human_probability = 0 then 0 else least(cast(ceil(human_probability * 10) as integer), 10) end
            as bin_index
    from words
)

select
    corpus,
    model_key,
    bin_index,
    case when bin_index = 0 then 0.0 else (bin_index - 1) / 10.0 end as bin_lower,
    bin_index / 10.0 as bin_upper,
    count(*) as n_words,
    count(distinct row(doc_id, word_index)) as n_contexts,
    avg(human_probability) as human_probability_mean,
    avg(model_probability_wt) as model_probability_wt_mean,
    avg(model_probability_lw) as model_probability_lw_mean,
    median(model_probability_wt) as model_probability_wt_median
from binned
group by corpus, model_key, bin_index
