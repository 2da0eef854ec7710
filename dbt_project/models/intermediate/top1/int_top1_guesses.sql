-- The top-1 game, one row per upstream guess row (every row kept: flags, not deletions), with the
-- true token read from the document the player saw (Shlegeris et al. 2024, sec. 3.1; SOURCES.md):
--   true token  = the document token at token_index = position - 1 (the context is every token before it,
--                 i.e. documents.text[:true_char_start]); NULL when the position points past the end;
--   next token  = the token after it (token_index = position), for the word-token rule.
-- The flags and the analysis subset are documented in _top1__models.yml.
with guesses as (
    -- the published study only; the live game's guesses: mart_live_top1_answers
    select * from {{ ref('stg_top1_guesses') }} where source = 'study'
),

doc_tokens as (
    select doc_id, token_index, token, char_start, char_end
    from {{ ref('stg_game_doc_tokens') }}
),

doc_lengths as (
    select doc_id, count(*) as n_doc_tokens
    from doc_tokens
    group by doc_id
),

documents as (
    select doc_id, text
    from {{ ref('stg_documents') }}
    where corpus = {{ game_corpus() }}
),

excluded as (
    select player_id, basis
    from {{ ref('top1_excluded_players') }}
),

joined as (
    select
        g.row_id,
        g.player_id,
        g.doc_id,
        g.position,
        g.guess,
        coalesce(l.n_doc_tokens, 0) as n_doc_tokens,
        t.token as true_token,
        t.char_start as true_char_start,
        t.char_end as true_char_end,
        n.token as next_token,
        d.text as doc_text,
        e.basis as exclusion_basis
    from guesses as g
    left join doc_lengths as l on l.doc_id = g.doc_id
    left join doc_tokens as t on t.doc_id = g.doc_id and t.token_index = g.position - 1
    left join doc_tokens as n on n.doc_id = g.doc_id and n.token_index = g.position
    left join documents as d on d.doc_id = g.doc_id
    left join excluded as e on e.player_id = g.player_id
),

flagged as (
    select
        *,
        position > n_doc_tokens as is_out_of_range,
        -- could not be typed in the game: a newline or U+FFFD (half of a multi-byte character) in the true token
        coalesce(contains(true_token, chr(10)) or contains(true_token, chr(65533)), false) as is_impossible,
        -- Shlegeris et al. 2024, sec. 3.3 / Figure 2: a space then only letters (Python ' ' + str.isalpha(): Unicode
        -- letters, no digits), and the next token starts with a space
        coalesce(regexp_matches(true_token, '^ \p{L}+$') and starts_with(next_token, ' '), false) as is_word_token,
        exclusion_basis is not null as is_excluded_player
    from joined
)

select
    row_id,
    player_id,
    doc_id,
    position,
    guess,
    true_token,
    true_char_start,
    true_char_end,
    next_token,
    n_doc_tokens,
    is_out_of_range,
    is_impossible,
    is_word_token,
    is_excluded_player,
    exclusion_basis,
    case when is_out_of_range then null else guess = true_token end as is_correct,
    not is_out_of_range and not is_impossible and not is_excluded_player as in_analysis,
    -- the last 80 characters of the context (the whole document when out of range), for display
    case
        when is_out_of_range then right(doc_text, 80)
        else right(substring(doc_text, 1, true_char_start), 80)
    end as context_tail
from flagged
