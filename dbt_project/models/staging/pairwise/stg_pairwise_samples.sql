-- One row per generator sample x_k (k = 0..399) of a comparison, with log-probabilities (nats).
with source as (
{{ select_source_or_empty('pairwise', 'pairwise_samples', [
    ['comparison_id', 'integer'], ['k', 'integer'], ['sample_token', 'varchar'], ['is_true_token', 'boolean'],
    ['generation_prob', 'double'], ['generator_logprob_x_nats', 'double'],
    ['logprob_x_two_layers_nats', 'double'], ['logprob_x_twelve_layers_nats', 'double'],
    ['logprob_x_twenty_four_layers_nats', 'double'], ['source_path', 'varchar'], ['source_sha256', 'varchar']
]) }}
),

renamed as (
    select
        comparison_id, k, sample_token, is_true_token, generation_prob, generator_logprob_x_nats,
        logprob_x_two_layers_nats, logprob_x_twelve_layers_nats, logprob_x_twenty_four_layers_nats,
        source_path, source_sha256
    from source
)

select * from renamed
