-- The baseline predictors of the reading-time regressions, one row per word of the corpora with word-level
-- analyses (reading_corpora(): Natural Stories, Provo, UCL and the user's corpora; stg_words): word length, log
-- frequency and their product for the word and its 3 previous words (spillover), NULL across a text start (never
-- the previous text's words), with where the word stands in its text and sentence (the exclusions of
-- int_reading_observations use them).
--   length_chars: characters of the word without the punctuation attached to its ends ("moors," -> 5, "москва,"
--     -> 6): a letter, digit or mark is one of any script (\p{L}, \p{N}, \p{M}; RE2's [:alnum:] is ASCII only and
--     gave Cyrillic, Greek, Hebrew and Hangul words 0); words with punctuation attached are kept (a choice; their
--     punctuation is visible in has_punctuation).
--   log_frequency: the Zipf frequency of the word (log10 of its frequency per billion words). A corpus whose user
--     gave a frequency file (stg_word_frequencies rows of frequency_source user) takes the user's value (NULL
--     where the file has none for the word: the word then leaves the regressions); every other corpus takes
--     wordfreq's (English 'large' list; 0 for a word wordfreq does not know: its own floor). frequency_source says
--     which.
--   sentences: a word whose last letter or digit is followed by . ? or ! (then any closing quotes or
--     brackets) ends a sentence, but not a title (Mr. Mrs. Ms. Dr. St. Jr. Sr. Prof. Mt.); UCL texts are single
--     sentences.
with words as (
    select corpus, doc_id, word_index, word from {{ ref('stg_words') }}
    where corpus in {{ reading_corpora() }}
),

all_frequencies as (
    select corpus, doc_id, word_index, zipf_frequency, frequency_source from {{ ref('stg_word_frequencies') }}
),

user_frequencies as (
    select * from all_frequencies where frequency_source = 'user'
),

frequencies as (
    -- per corpus one source: the user's file where the corpus has one, else wordfreq
    select * from all_frequencies
    where frequency_source = 'user'
       or (frequency_source = 'wordfreq' and corpus not in (select distinct u.corpus from user_frequencies as u))
),

described as (
    select
        w.corpus, w.doc_id, w.word_index, w.word,
        length(regexp_replace(w.word, '^[^\p{L}\p{N}\p{M}]+|[^\p{L}\p{N}\p{M}]+$', '', 'g')) as length_chars,
        regexp_matches(w.word, '^[^\p{L}\p{N}\p{M}]|[^\p{L}\p{N}\p{M}]$') as has_punctuation,
        f.zipf_frequency as log_frequency,
        coalesce(f.frequency_source,
                 case when w.corpus in (select u.corpus from user_frequencies as u) then 'user' else 'wordfreq' end)
            as frequency_source,
        regexp_matches(w.word, '[.?!\x{037E}][^\p{L}\p{N}\p{M}]*$')  -- U+037E: the Greek question mark
            and not regexp_matches(w.word, '^(Mr|Mrs|Ms|Dr|St|Jr|Sr|Prof|Mt)\.$') as ends_sentence_mark,
        w.word_index = 0 as is_text_first,
        w.word_index = max(w.word_index) over (partition by w.corpus, w.doc_id) as is_text_last
    from words as w
    left join frequencies as f using (corpus, doc_id, word_index)
),

sentences as (
    select
        *,
        -- a sentence starts at the text's start or after a word that ends one
        coalesce(sum(ends_sentence_mark::int) over (
            partition by corpus, doc_id order by word_index rows between unbounded preceding and 1 preceding), 0)
            as sentence_index
    from described
),

positioned as (
    select
        *,
        row_number() over (partition by corpus, doc_id, sentence_index order by word_index) - 1 as word_in_sentence,
        word_index = min(word_index) over (partition by corpus, doc_id, sentence_index) as is_sentence_first,
        word_index = max(word_index) over (partition by corpus, doc_id, sentence_index) as is_sentence_last
    from sentences
)

select
    corpus, doc_id, word_index, word, length_chars, has_punctuation, log_frequency, frequency_source,
    is_text_first, is_text_last, sentence_index, word_in_sentence, is_sentence_first, is_sentence_last,
    {%- for k in [1, 2, 3] %}
    lag(length_chars, {{ k }}) over w as prev{{ k }}_length_chars,
    lag(log_frequency, {{ k }}) over w as prev{{ k }}_log_frequency,
    lag(word_index, {{ k }}) over w as prev{{ k }}_word_index{{ "," if not loop.last }}
    {%- endfor %}
from positioned
window w as (partition by corpus, doc_id order by word_index)
