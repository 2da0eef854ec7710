-- The pairwise game's questions as the live game deals them (Shlegeris et al. 2024, sec. 4.1): the study's comparison
-- files of question sets 1 and 2 and the 10 training comparisons, with the context c, the true token y and
-- the generator's (GPT-2 small's) ln g(y|c).
select
    comparison_id,
    question_set,
    is_training,
    context,
    true_token,
    is_word_token,
    generator_logprob_y_nats,
    n_samples
from {{ ref('stg_pairwise_questions') }}
where question_set in ('set_1', 'set_2', 'training')
