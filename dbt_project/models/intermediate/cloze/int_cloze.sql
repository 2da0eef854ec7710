-- Cloze probability, surprisal and entropy per corpus word with cloze norms: the published norms of Provo and UCL
-- (a shipped corpus's cloze_norms in ingest/corpora.toml: published probabilities, as Provo's, or every response)
-- and a user corpus's own (rows of the same stg_cloze_norms: a probability, or counts c of N). See
-- _mart_cloze__models.yml for the definitions and the smoothing rules. Cloze surprisal = -ln p of the (smoothed)
-- cloze probability (the human counterpart of a model's surprisal that PNC correlates with it, Hao et al. 2020, sec.
-- 3.3.2).
--   user counts (c of N): p = c / N, smoothed like Provo's, (c + 1) / (N + 2) (smoothing add_one_binary).
--   user probability: taken as given, not smoothed (smoothing none; without N there is nothing to smooth with):
--     p = 0 has no finite surprisal, so its surprisal is NULL (the word leaves PNC); p = 1 has surprisal 0.
with norms as (
    select * from {{ ref('int_cloze_norms') }}
),

contexts as (
    select * from {{ ref('int_cloze_responses_contexts') }}
),

-- the word's own response in the UCL distribution: lower case, leading/trailing punctuation removed
word_response as (
    select
        n.corpus, n.doc_id, n.word_index,
        max(r.response_count) as response_count,
        max(r.probability_laplace) as probability_laplace
    from norms as n
    inner join {{ ref('stg_cloze_responses') }} as r
        on r.corpus = n.corpus and r.doc_id = n.doc_id and r.word_index = n.word_index
        and r.response = lower(regexp_replace(n.word, '^[^\w]+|[^\w]+$', '', 'g'))
    group by n.corpus, n.doc_id, n.word_index
),

unseen as (
    select corpus, doc_id, word_index, probability_laplace
    from {{ ref('stg_cloze_responses') }}
    where is_unseen_placeholder
),

joined as (
    select
        n.corpus,
        n.doc_id,
        n.word_index,
        n.native_id,
        n.word,
        coalesce(n.n_responses, c.n_responses) as n_responses,
        case
            when n.response_count is not null then n.response_count  -- a user's counts
            when n.corpus in {{ cloze_corpora('published_probabilities') }}
                then round(n.cloze_probability_published * n.n_responses)::integer
            when c.n_responses is not null then coalesce(w.response_count, 0)
        end as response_count,
        n.cloze_probability_published,
        n.smoothing as smoothing_published,
        coalesce(w.probability_laplace, u.probability_laplace) as probability_laplace_distribution,
        c.entropy_laplace_bits,
        c.entropy_raw_bits,
        c.n_response_types,
        c.context_match,
        c.modal_response as modal_response_distribution,
        c.modal_response_count,
        c.n_modal_responses,
        n.modal_response as modal_response_published,
        n.entropy_published_nats,
        n.competition_published,
        n.rating_mean,
        n.rating_sd,
        n.n_upstream_rows,
        n.source_path,
        n.source_sha256
    from norms as n
    left join contexts as c using (corpus, doc_id, word_index)
    left join word_response as w using (corpus, doc_id, word_index)
    left join unseen as u using (corpus, doc_id, word_index)
),

probabilities as (
    -- shipped corpora by what their norms hold (ingest/corpora.toml cloze_norms); a user corpus by its file: a
    -- probability taken as given (not smoothed), or counts c of N smoothed as Provo's
    select
        *,
        case when corpus in {{ cloze_corpora('published_probabilities') }} then cloze_probability_published
             when corpus in {{ cloze_corpora('responses') }} then response_count / n_responses
             else coalesce(cloze_probability_published, response_count / n_responses) end as cloze_probability,
        case when corpus in {{ cloze_corpora('responses') }} then cloze_probability_published
             when corpus in {{ cloze_corpora('published_probabilities') }} or cloze_probability_published is null
                 then (response_count + 1) / (n_responses + 2)
             else cloze_probability_published end as cloze_probability_smoothed,
        case when corpus in {{ cloze_corpora('responses') }} then 'laplace_upstream'
             when corpus in {{ cloze_corpora('published_probabilities') }} or cloze_probability_published is null
                 then 'add_one_binary'
             else 'none' end as smoothing
    from joined
),

all_norms as (
    select * from probabilities
)

select
    corpus,
    doc_id,
    word_index,
    native_id,
    word,
    n_responses,
    response_count,
    cloze_probability,
    cloze_probability_smoothed,
    smoothing,
    -- + 0.0: a probability of 1 gives 0, not -0 (IEEE -0.0 + 0.0 = +0.0; every other value unchanged)
    case when cloze_probability_smoothed > 0 then -log2(cloze_probability_smoothed) + 0.0 end as cloze_surprisal_bits,
    case when cloze_probability_smoothed > 0 then -ln(cloze_probability_smoothed) + 0.0 end as cloze_surprisal_nats,
    entropy_laplace_bits as cloze_entropy_bits,
    entropy_laplace_bits * ln(2) as cloze_entropy_nats,
    entropy_raw_bits as cloze_entropy_raw_bits,
    n_response_types,
    coalesce(modal_response_published, modal_response_distribution) as modal_response,
    case
        when modal_response_count is not null then modal_response_count / n_responses  -- a response distribution (UCL)
        when lower(regexp_replace(word, '^[^\w]+|[^\w]+$', '', 'g')) = lower(modal_response_published)
            then cloze_probability
    end as modal_response_probability,
    n_modal_responses,
    cloze_probability_published,
    smoothing_published,
    probability_laplace_distribution,
    entropy_published_nats,
    competition_published,
    rating_mean,
    rating_sd,
    context_match,
    n_upstream_rows,
    source_path,
    source_sha256
from all_norms
