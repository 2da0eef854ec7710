-- One row per question of the top-1 game (a document position a player was asked; past-the-end rows
-- out): its context, the true token, how the players (in analysis) did, and every model's prediction
-- with its probability and the scored candidates. The table behind the question explorer; humans beat
-- the models where human_accuracy > 0 and n_models_correct = 0.
with questions as (
    select * from {{ ref('int_top1_questions') }}
    where not is_out_of_range
),

answers as (
    select * from {{ ref('int_top1_guesses') }}
    where in_analysis
),

human as (
    select doc_id, position,
        list(guess order by row_id) as human_guesses,
        count(*) as n_answers,
        count(*) filter (where is_correct) as n_correct
    from answers
    group by doc_id, position
),

wrong_counts as (
    select doc_id, position, guess, count(*) as n,
        row_number() over (partition by doc_id, position order by count(*) desc, guess) as rk
    from answers
    where not is_correct
    group by doc_id, position, guess
),

models as (
    select doc_id, position,
        list({
            'model_key': model_key, 'comparison': comparison, 'predicted': predicted,
            'probability': predicted_probability, 'is_correct': is_correct, 'argmax_proven': argmax_proven,
            'candidates': candidate_words,
            'candidate_probabilities': list_transform(candidate_logprobs_nats, lambda x: exp(x)),
            'top_next_tokens': top_first_tokens,
            'top_next_token_probabilities': list_transform(top_first_token_logprobs_nats, lambda x: exp(x))
        } order by model_key) as model_predictions,
        count(*) filter (where is_correct) as n_models_correct,
        count(*) filter (where has_prediction) as n_models
    from {{ ref('int_top1_model_predictions') }}
    group by doc_id, position
)

select
    q.doc_id, q.position, q.context_tail, q.true_token, q.next_token, q.is_impossible, q.is_word_token,
    coalesce(h.n_answers, 0) as n_answers,
    coalesce(h.n_correct, 0) as n_correct,
    h.n_correct / h.n_answers as human_accuracy,
    w.guess as most_common_wrong_guess,
    coalesce(h.human_guesses, []) as human_guesses,
    coalesce(m.n_models, 0) as n_models,
    coalesce(m.n_models_correct, 0) as n_models_correct,
    m.model_predictions
from questions as q
left join human as h using (doc_id, position)
left join wrong_counts as w on w.doc_id = q.doc_id and w.position = q.position and w.rk = 1
left join models as m on m.doc_id = q.doc_id and m.position = q.position
