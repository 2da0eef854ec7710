-- The pairwise game's robustness checks (Shlegeris et al. 2024, appendices B and C), all questions: coarser rounding
-- of the answers (0.1/0.2/0.5/0.8/0.9 and 0.2/0.5/0.8) and the bootstrap over halves of the players (median [5%, 95%]).
select predictor_label as "predictor",
       max(printf('%.1f', perplexity)) filter (where rounding = 'interface_11' and uncertainty_method = 'two_sigma') as "11 choices",
       max(printf('%.1f', perplexity)) filter (where rounding = 'coarse_5' and uncertainty_method = 'two_sigma') as "5 choices",
       max(printf('%.1f', perplexity)) filter (where rounding = 'coarse_3' and uncertainty_method = 'two_sigma') as "3 choices",
       max(printf('%.1f [%.1f, %.1f]', perplexity, perplexity_low, perplexity_high))
         filter (where rounding = 'interface_11' and uncertainty_method = 'bootstrap_players') as "bootstrap, 11 choices"
from mart_pairwise_perplexity
where subset = 'all'
group by predictor_label, predictor_kind
order by predictor_kind <> 'human', max(perplexity) filter (where rounding = 'interface_11' and uncertainty_method = 'two_sigma') desc
