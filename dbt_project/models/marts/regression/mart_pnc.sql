-- Predictability norm correlation (PNC, Hao et al. 2020, sec. 3.3.2) per (corpus with cloze norms, run, definition):
-- int_pnc (the Python model that computes it), published as is (mart_perplexity_vs_delta_loglik reads the int model).
select * from {{ ref('int_pnc') }}
