{#-
  Word surprisal from token scores: the alignment of tokens to a corpus's own words and the two
  word surprisals of Oh & Schuler 2024, leading-whitespace (LW) and whitespace-trailing
  (WT). Plain Jinja (no dbt functions): `int_word_surprisal` calls it with refs, and the dashboard's
  "type a sentence" box renders the same text with jinja2 over in-memory tables, so the numbers on
  the page come from this one definition (dashboards/word_surprisal_sql.py).

  tokens: run_id, model_key, corpus, doc_id, token_index, char_start, char_end, logprob_nats,
          logprob_word_initial_nats (ln B before the token), logprob_word_initial_after_nats (ln B
          after it; after a document's last token: at the end of the text)
  words:  corpus, doc_id, word_index, word, char_start, char_end (the word's own characters)

  Alignment, from the scorer's character spans (never by re-tokenizing words). Word k owns the
  characters [end of word k-1, end of word k): its own characters and the whitespace before it
  (the first word also owns anything before it, the last word anything after it up to the end of
  the text). A token belongs to the word that owns its last character (an empty-span token, a byte
  piece of a character split across tokens, to the word that owns the character before it).
  Punctuation attached to a word is the word's (the corpus's own words are whitespace-delimited).
  A word is aligned when its tokens are consecutive and start exactly where the word's characters
  (with its leading whitespace) start and end exactly where they end. Otherwise (a token that
  crosses the boundary between two words, a word with no token of its own) the word is NOT aligned:
  it is kept with `is_aligned = false` and NULL surprisals, never dropped or merged, and the dbt
  test `word_surprisal_unaligned_words` lists it by id.

  LW (the common practice): ln p_LW(w) = sum of ln p(token) over the word's tokens, the first token
  carrying the word's leading whitespace.
  WT (Oh & Schuler 2024, eqs. 5-6): ln p_WT(w) = ln p_LW(w) + ln B(after w's last token) - ln B(before w's
  first token), B(t) = the mass on word-initial tokens plus end-of-text at position t.
  First word of a text: conditioned on BOS only, no preceding boundary term (the subtracted term
  is 0; `logprob_boundary_before_nats` is NULL). Last word: the following boundary is the end of
  the text, B at the position after the last token (word-initial tokens + end-of-text there).
  Hence per text: sum ln p_WT = sum ln p_LW + ln B(after the last word), exactly (the after-term of
  word k is the before-term of word k+1: the same stored number).
-#}
{% macro word_surprisal_sql(tokens, words) -%}
with words as (
    select
        corpus, doc_id, word_index, word, char_start, char_end,
        coalesce(lag(char_end) over (partition by corpus, doc_id order by word_index), 0) as span_start,
        lead(word_index) over (partition by corpus, doc_id order by word_index) is null as is_last_word
    from {{ words }}
),

tokens as (
    select
        run_id, model_key, corpus, doc_id, token_index, char_start, char_end, logprob_nats,
        logprob_word_initial_nats, logprob_word_initial_after_nats,
        greatest(char_end - 1, 0) as anchor
    from {{ tokens }}
),

doc_runs as (
    -- the documents each run scored, and where their texts end (the tokens tile each text)
    select run_id, model_key, corpus, doc_id, max(char_end) as text_end
    from tokens
    group by all
),

word_spans as (
    select
        d.run_id, d.model_key, w.corpus, w.doc_id, w.word_index, w.word, w.char_start, w.char_end,
        case when w.word_index = 0 then 0 else w.span_start end as span_start,
        case when w.is_last_word then greatest(d.text_end, w.char_end) else w.char_end end as span_end,
        w.is_last_word
    from words as w
    inner join doc_runs as d on d.corpus = w.corpus and d.doc_id = w.doc_id
),

token_words as (
    -- each token to the word that owns its last character (the last word starting at or before it)
    select t.*, ws.word_index
    from tokens as t
    asof inner join word_spans as ws
        on ws.run_id = t.run_id and ws.corpus = t.corpus and ws.doc_id = t.doc_id and t.anchor >= ws.span_start
),

per_word as (
    select
        run_id, corpus, doc_id, word_index,
        count(*) as n_tokens,
        min(token_index) as first_token_index,
        max(token_index) as last_token_index,
        arg_min(char_start, token_index) as first_token_start,
        arg_max(char_end, token_index) as last_token_end,
        sum(logprob_nats) as logprob_lw_nats,
        count(logprob_nats) as n_scored_tokens,
        arg_min(logprob_word_initial_nats, token_index) as logprob_b_before_nats,
        arg_max(logprob_word_initial_after_nats, token_index) as logprob_b_after_nats
    from token_words
    group by all
),

aligned as (
    select
        ws.run_id, ws.model_key, ws.corpus, ws.doc_id, ws.word_index, ws.word, ws.char_start, ws.char_end,
        ws.span_start, ws.span_end, ws.is_last_word,
        coalesce(p.n_tokens, 0) as n_tokens,
        p.first_token_index, p.last_token_index,
        coalesce(
            p.n_tokens = p.last_token_index - p.first_token_index + 1
            and p.first_token_start = ws.span_start and p.last_token_end = ws.span_end,
            false) as is_aligned,
        p.n_scored_tokens = p.n_tokens as is_fully_scored,
        p.logprob_lw_nats,
        case when ws.word_index > 0 then p.logprob_b_before_nats end as logprob_boundary_before_nats,
        p.logprob_b_after_nats as logprob_boundary_after_nats
    from word_spans as ws
    left join per_word as p
        on p.run_id = ws.run_id and p.corpus = ws.corpus and p.doc_id = ws.doc_id and p.word_index = ws.word_index
)

select
    run_id, model_key, corpus, doc_id, word_index, word, char_start, char_end, span_start, span_end,
    is_last_word, n_tokens, n_tokens > 1 as is_multitoken, first_token_index, last_token_index, is_aligned,
    case when is_aligned and is_fully_scored then logprob_lw_nats end as logprob_lw_nats,
    case when is_aligned and is_fully_scored then logprob_boundary_before_nats end as logprob_boundary_before_nats,
    case when is_aligned and is_fully_scored then logprob_boundary_after_nats end as logprob_boundary_after_nats,
    -- Oh & Schuler 2024, eq. 6: ln p_WT = ln p_LW + ln B(after) - ln B(before); no before-term for the first word
    case when is_aligned and is_fully_scored then
        logprob_lw_nats + logprob_boundary_after_nats - coalesce(logprob_boundary_before_nats, 0)
    end as logprob_wt_nats
from aligned
{%- endmacro %}

{#- The corpora the word-level analyses cover (word surprisal, reading times, cloze, the export): every corpus
    with words (stg_words), shipped or a user's, except the LM game's (lm_game, and any corpus raw.corpora marks
    is_game): its documents are contexts of a guessing game, not texts people read. A subquery, for
    `where corpus in {{ reading_corpora() }}` (dbt only: it refs models). -#}
{% macro reading_corpora() -%}
(select distinct corpus from {{ ref('stg_words') }}
 where corpus <> {{ game_corpus() }} and corpus not in (select corpus from {{ ref('stg_corpora') }} where is_game and corpus is not null))
{%- endmacro %}
