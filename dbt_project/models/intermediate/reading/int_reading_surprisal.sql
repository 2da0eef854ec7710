-- Every run's word surprisal on the reading corpora in long form, one row per (run, definition, word) with the
-- surprisal of the word and of its 3 previous words (spillover; NULL across a text start, and NULL where the
-- previous word has no value in that run, e.g. the UCL imports' sentence-first words), nats. definition:
-- 'lw' (leading-whitespace) or 'wt' (whitespace-trailing, Oh & Schuler 2024, eqs. 5-6), where the run has it.
with runs as (
    select * from {{ ref('int_word_surprisal_runs') }}
    where used_in_marts
),

long as (
    select corpus, model_key, run_id, run_source, doc_id, word_index, 'lw' as definition,
        surprisal_lw_nats as surprisal_nats
    from runs where surprisal_lw_nats is not null
    union all
    select corpus, model_key, run_id, run_source, doc_id, word_index, 'wt' as definition,
        surprisal_wt_nats as surprisal_nats
    from runs where surprisal_wt_nats is not null
),

lagged as (
    select
        *,
        {%- for k in [1, 2, 3] %}
        case when lag(word_index, {{ k }}) over w = word_index - {{ k }} then lag(surprisal_nats, {{ k }}) over w end
            as prev{{ k }}_surprisal_nats{{ "," if not loop.last }}
        {%- endfor %}
    from long
    window w as (partition by run_id, corpus, definition, doc_id order by word_index)
)

select * from lagged
