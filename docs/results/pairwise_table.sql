-- Human perplexity from the pairwise game (Shlegeris et al. 2024, sec. 4.1, eqs. 4-5): the importance-sampled
-- perplexity of humans and of language models answering the same rows, all questions and the word-token subset,
-- the interface's 11 choices (rounded) or exact, with the ±2σ bounds of sec. 4.1.3 (mart_pairwise_perplexity).
select predictor_label as "predictor", replace(subset, '_', ' ') as "questions",
       case rounding when 'interface_11' then 'rounded to the 11 choices' when 'exact' then 'exact' else rounding end as "answers",
       n_players as "players", n_answers as "answers used",
       printf('%.4f', lh_minus_lg_nats) as "L_h − L_G (nats)", printf('%.4f', sigma_nats) as "σ (nats)",
       printf('%.1f [%.1f, %.1f]', perplexity, perplexity_low, perplexity_high) as "perplexity [±2σ]",
       coalesce(printf('%.1f', true_perplexity), '—') as "true perplexity"
from mart_pairwise_perplexity
where uncertainty_method = 'two_sigma' and subset in ('all', 'word_tokens') and rounding in ('interface_11', 'exact')
  and not (predictor_kind = 'human' and rounding = 'exact')
order by subset, predictor_kind <> 'human', rounding desc, perplexity desc
