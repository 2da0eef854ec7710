-- Per (corpus, model): how much the whitespace-trailing correction (Oh & Schuler 2024) moves word surprisal,
-- over the words of the run the marts use (int_runs.used_in_marts; the UCL precomputed surprisals
-- have LW only, so no WT terms). Means are over words (each word counts once), in bits.
-- words_moving_most: the 5 aligned words with the largest |WT - LW|, as "word (+x.xx bits)" in
-- doc/word order of size; the paper's point is that words before low-probability boundaries move
-- most (before punctuation, at phrase ends).
with words as (
    select * from {{ ref('mart_word_surprisal') }}
    where used_in_marts
),

texts as (
    select t.corpus, t.run_id, max(abs(t.telescoping_error_nats)) as max_text_telescoping_error_nats
    from {{ ref('int_word_surprisal_texts') }} as t
    group by all
),

ranked as (
    select
        *,
        row_number() over (partition by corpus, model_key, run_id
                           order by abs(surprisal_wt_minus_lw_bits) desc nulls last, doc_id asc, word_index asc)
            as move_rank
    from words
),

summary as (
    select
        corpus, model_key, any_value(model_id) as model_id, run_id, any_value(run_source) as run_source,
        any_value(definitions) as definitions, any_value(end_of_text_tokens) as end_of_text_tokens,
        count(*) as n_words,
        count(*) filter (where is_aligned) as n_aligned_words,
        count(*) filter (where not is_aligned) as n_unaligned_words,
        count(surprisal_wt_bits) as n_words_with_wt,
        avg(case when is_multitoken then 1.0 else 0.0 end) as share_multitoken,
        avg(surprisal_lw_bits) as mean_surprisal_lw_bits,
        avg(surprisal_wt_bits) as mean_surprisal_wt_bits,
        avg(surprisal_wt_minus_lw_bits) as mean_wt_minus_lw_bits,
        avg(abs(surprisal_wt_minus_lw_bits)) as mean_abs_wt_minus_lw_bits,
        avg(case when abs(surprisal_wt_minus_lw_bits) > 1 then 1.0 else 0.0 end)
            filter (where surprisal_wt_minus_lw_bits is not null) as share_moved_over_1_bit,
        string_agg(
            case when move_rank <= 5 and surprisal_wt_minus_lw_bits is not null then
                word || ' (' || case when surprisal_wt_minus_lw_bits >= 0 then '+' else '' end
                || printf('%.2f', surprisal_wt_minus_lw_bits) || ' bits)'
            end, '; ' order by move_rank) as words_moving_most
    from ranked
    group by corpus, model_key, run_id
)

select s.*, t.max_text_telescoping_error_nats
from summary as s
left join texts as t using (corpus, run_id)
order by s.corpus, s.model_key
