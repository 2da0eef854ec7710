-- Anticipation: entropy added to or in place of surprisal, and the word's Monte-Carlo entropy against its
-- first-token stand-in (int_anticipation_delta_loglik), published as is.
select * from {{ ref('int_anticipation_delta_loglik') }}
order by corpus, measure, model_key, entropy_run_id, surprisal_run_id, comparison
