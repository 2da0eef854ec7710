-- Humans vs models, next word: one row per (corpus, position, model). See _cloze_vs_model__models.yml for
-- every definition. UCL: the human response distribution over its words (raw shares c / N_words, the empty
-- response excluded) against the model's WT probabilities of the same words; Provo: the model's probability
-- of the modal cloze response and of the true word against the published cloze probability.
with resp as (
    select
        *,
        -- average ranks (ties share the mean of their ranks) for Spearman's rho
        rank() over (partition by model_key, corpus, doc_id, word_index order by human_probability)
            + (count(*) over (partition by model_key, corpus, doc_id, word_index, human_probability) - 1) / 2.0
            as human_rank,
        rank() over (partition by model_key, corpus, doc_id, word_index order by model_probability_wt)
            + (count(*) over (partition by model_key, corpus, doc_id, word_index, model_probability_wt) - 1) / 2.0
            as model_rank,
        row_number() over (partition by model_key, corpus, doc_id, word_index
                           order by response_count desc, response asc) as human_order,
        row_number() over (partition by model_key, corpus, doc_id, word_index
                           order by model_probability_wt desc, response asc) as model_order,
        max(response_count) over (partition by model_key, corpus, doc_id, word_index) as max_count
    from {{ ref('int_cloze_vs_model_responses') }}
),

ucl as (
    select
        model_key,
        any_value(run_id) as run_id,
        corpus,
        doc_id,
        word_index,
        count(*) as n_response_types,
        cast(any_value(n_responses_words) as bigint) as n_responses_words,
        any_value(response) filter (where human_order = 1) as modal_response,
        count(*) filter (where response_count = max_count) as n_modal_responses,
        any_value(human_probability) filter (where human_order = 1) as human_probability_modal,
        any_value(model_probability_wt) filter (where human_order = 1) as model_probability_modal_wt,
        any_value(model_probability_lw) filter (where human_order = 1) as model_probability_modal_lw,
        any_value(model_probability_wt_renormalised) filter (where human_order = 1)
            as model_probability_modal_renormalised,
        any_value(response) filter (where model_order = 1) as model_top_response,
        -sum(human_probability * log2(human_probability)) as human_entropy_bits,
        -sum(model_probability_wt_renormalised * log2(model_probability_wt_renormalised))
            as model_entropy_renormalised_bits,
        sum(human_probability * log2(human_probability / model_probability_wt_renormalised))
            as kl_human_model_bits,
        sum(0.5 * human_probability
              * log2(2 * human_probability / (human_probability + model_probability_wt_renormalised))
            + 0.5 * model_probability_wt_renormalised
              * log2(2 * model_probability_wt_renormalised / (human_probability + model_probability_wt_renormalised)))
            as js_divergence_bits,
        case when count(*) >= 3 then corr(human_rank, model_rank) end as spearman_rho,
        sum(model_probability_wt) as model_mass_on_responses_wt,
        sum(model_probability_lw) as model_mass_on_responses_lw
    from resp
    group by model_key, corpus, doc_id, word_index
),

empty as (
    select corpus, doc_id, word_index, coalesce(sum(response_count), 0) as n_responses_empty
    from {{ ref('stg_cloze_responses') }}
    where response is null
    group by all
),

true_word as (
    select model_key, corpus, doc_id, word_index, scored_text as true_word,
           probability_wt as model_probability_true_word_wt, probability_lw as model_probability_true_word_lw
    from {{ ref('int_cloze_model_probabilities') }}
    where candidate_kind = 'true_word' and status = 'ok'
),

provo_modal as (
    select model_key, run_id, corpus, doc_id, word_index, response as modal_response,
           probability_wt as model_probability_modal_wt, probability_lw as model_probability_modal_lw
    from {{ ref('int_cloze_model_probabilities') }}
    where candidate_kind = 'modal_response' and status = 'ok'
),

norms as (
    select corpus, doc_id, word_index, word, n_responses, cloze_probability_published, modal_response
    from {{ ref('int_cloze_norms') }}
),

provo as (
    select
        m.model_key,
        m.run_id,
        m.corpus,
        m.doc_id,
        m.word_index,
        cast(null as bigint) as n_response_types,
        cast(n.n_responses as bigint) as n_responses_words,
        m.modal_response,
        cast(null as bigint) as n_modal_responses,
        -- Provo publishes the share of the true word only: the modal response's share is known where it is the word
        case when lower(m.modal_response) = lower(t.true_word) then n.cloze_probability_published end
            as human_probability_modal,
        m.model_probability_modal_wt,
        m.model_probability_modal_lw,
        cast(null as double) as model_probability_modal_renormalised,
        cast(null as varchar) as model_top_response,
        cast(null as double) as human_entropy_bits,
        cast(null as double) as model_entropy_renormalised_bits,
        cast(null as double) as kl_human_model_bits,
        cast(null as double) as js_divergence_bits,
        cast(null as double) as spearman_rho,
        cast(null as double) as model_mass_on_responses_wt,
        cast(null as double) as model_mass_on_responses_lw
    from provo_modal as m
    inner join norms as n on n.corpus = m.corpus and n.doc_id = m.doc_id and n.word_index = m.word_index
        and n.modal_response = m.modal_response  -- int_cloze_norms keeps one norms row per word
    left join true_word as t
        on t.model_key = m.model_key and t.corpus = m.corpus and t.doc_id = m.doc_id and t.word_index = m.word_index
    where m.corpus in {{ cloze_corpora('published_probabilities') }}
),

contexts as (
    select p.corpus, p.doc_id, p.word_index, substr(any_value(d.text), 1, any_value(p.context_chars)) as context
    from {{ ref('int_cloze_model_probabilities') }} as p
    inner join {{ ref('stg_documents') }} as d on d.corpus = p.corpus and d.doc_id = p.doc_id
    group by all
),

joined as (
    select * from ucl
    union all by name
    select * from provo
)

select
    j.corpus,
    j.doc_id,
    j.word_index,
    j.model_key,
    j.run_id,
    c.context,
    t.true_word,
    j.modal_response,
    j.n_modal_responses,
    j.model_top_response,
    j.model_top_response = j.modal_response as model_top_is_human_modal,
    j.n_response_types,
    j.n_responses_words,
    cast(case when j.corpus in {{ cloze_corpora('responses') }} then coalesce(e.n_responses_empty, 0) end as bigint)
        as n_responses_empty,
    j.human_probability_modal,
    j.model_probability_modal_wt,
    j.model_probability_modal_lw,
    j.model_probability_modal_renormalised,
    case
        when j.corpus in {{ cloze_corpora('published_probabilities') }} then n.cloze_probability_published
        when t.true_word is not null then coalesce(r.human_probability, 0)
    end as human_probability_true_word,
    t.model_probability_true_word_wt,
    t.model_probability_true_word_lw,
    j.human_entropy_bits,
    j.model_entropy_renormalised_bits,
    j.kl_human_model_bits,
    j.js_divergence_bits,
    j.spearman_rho,
    j.model_mass_on_responses_wt,
    j.model_mass_on_responses_lw
from joined as j
left join true_word as t
    on t.model_key = j.model_key and t.corpus = j.corpus and t.doc_id = j.doc_id and t.word_index = j.word_index
left join norms as n on n.corpus = j.corpus and n.doc_id = j.doc_id and n.word_index = j.word_index
left join contexts as c on c.corpus = j.corpus and c.doc_id = j.doc_id and c.word_index = j.word_index
left join empty as e on e.corpus = j.corpus and e.doc_id = j.doc_id and e.word_index = j.word_index
left join {{ ref('int_cloze_vs_model_responses') }} as r
    on r.model_key = j.model_key and r.corpus = j.corpus and r.doc_id = j.doc_id and r.word_index = j.word_index
    and r.response = lower(t.true_word)
