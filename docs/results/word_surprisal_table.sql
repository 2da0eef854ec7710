-- Word surprisal, leading-whitespace (LW) against whitespace-trailing (WT) (Oh & Schuler 2024, eqs. 5-6), per corpus
-- and scored model (mart_word_surprisal_summary): how many words take more than one token, the mean surprisal both
-- ways, how far WT moves a word from LW, the words it moves most, and the largest error of the identity that a text's
-- WT and LW totals differ only by its final boundary term.
select c.title as "corpus", s.model_key as "model", s.n_words as "words",
       printf('%.1f%%', 100 * share_multitoken) as "multi-token",
       printf('%.3f / %.3f', mean_surprisal_lw_bits, mean_surprisal_wt_bits) as "mean LW / WT (bits)",
       printf('%.3f', mean_abs_wt_minus_lw_bits) as "mean |WT − LW| (bits)",
       printf('%.1f%%', 100 * share_moved_over_1_bit) as "moved > 1 bit",
       coalesce(words_moving_most, '—') as "moved most",
       printf('%.1e', max_text_telescoping_error_nats) as "largest text error (nats)"
from mart_word_surprisal_summary s join mart_corpora c using (corpus)
where run_source = 'scored' and n_words_with_wt > 0
order by c.title, s.model_key
