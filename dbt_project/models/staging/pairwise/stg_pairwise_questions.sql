-- One row per comparison (question): context c, true token y, log-probabilities of y (nats).
with source as (
{{ select_source_or_empty('pairwise', 'pairwise_questions', [
    ['comparison_id', 'integer'], ['question_set', 'varchar'], ['is_training', 'boolean'],
    ['context', 'varchar'], ['true_token', 'varchar'], ['is_word_token', 'boolean'],
    ['generator_index', 'integer'], ['generator_name', 'varchar'], ['generator_logprob_y_nats', 'double'],
    ['logprob_y_two_layers_nats', 'double'], ['logprob_y_twelve_layers_nats', 'double'],
    ['logprob_y_twenty_four_layers_nats', 'double'], ['has_generation_probs', 'boolean'],
    ['n_samples', 'integer'], ['source_path', 'varchar'], ['source_sha256', 'varchar']
]) }}
),

renamed as (
    select
        comparison_id, question_set, is_training, context, true_token, is_word_token,
        generator_index, generator_name, generator_logprob_y_nats,
        logprob_y_two_layers_nats, logprob_y_twelve_layers_nats, logprob_y_twenty_four_layers_nats,
        has_generation_probs, n_samples, source_path, source_sha256
    from source
)

select * from renamed
