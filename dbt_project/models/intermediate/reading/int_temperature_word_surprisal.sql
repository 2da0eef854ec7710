-- Each corpus word's surprisal under the temperature-scaled distribution softmax(logits / T) (Liu, Škrjanec & Demberg
-- 2024), for every T of a complete `temperature` run, with the surprisal of its 3 previous words (spillover; NULL
-- across a text start), nats. Whitespace-trailing (the definition the reading regressions use, Oh & Schuler 2024,
-- eqs. 5-6) with B_T, the tempered boundary mass, and leading-whitespace. The tokens are aligned to the words by
-- macros/word_surprisal.sql, the one definition of a word's surprisal: each (run, T) is given to it as a run of its
-- own.
with tokens as (
    select
        run_id || '@' || temperature as run_id, model_key, corpus, doc_id, token_index, char_start, char_end,
        logprob_nats, logprob_word_initial_nats, logprob_word_initial_after_nats
    from {{ ref('stg_temperature_token_scores') }}
),

run_temperatures as (
    select distinct run_id, temperature, run_id || '@' || temperature as run_key
    from {{ ref('stg_temperature_token_scores') }}
),

reading_words as (
    select w.corpus, w.doc_id, w.word_index, w.word, w.char_start, w.char_end
    from {{ ref('stg_words') }} as w
    where w.corpus in (select distinct t.corpus from tokens as t)
),

surprisal as (
    {{ word_surprisal_sql('tokens', 'reading_words') }}
),

words as (
    select
        rt.run_id, rt.temperature, s.model_key, s.corpus, s.doc_id, s.word_index, s.is_aligned,
        -s.logprob_wt_nats as surprisal_nats,
        -s.logprob_lw_nats as surprisal_lw_nats
    from surprisal as s
    inner join run_temperatures as rt on rt.run_key = s.run_id
)

select
    *,
    {%- for k in [1, 2, 3] %}
    case when lag(word_index, {{ k }}) over w = word_index - {{ k }} then lag(surprisal_nats, {{ k }}) over w end
        as prev{{ k }}_surprisal_nats{{ "," if not loop.last }}
    {%- endfor %}
from words
window w as (partition by run_id, temperature, corpus, doc_id order by word_index)
