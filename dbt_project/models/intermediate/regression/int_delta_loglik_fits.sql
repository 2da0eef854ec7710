-- Delta log-likelihood of reading times (Hao et al. 2020, sec. 3.2), one row per (corpus, measure, run, definition,
-- method): every fit of every method, int_delta_loglik (cv_means, readers) and int_delta_loglik_lmer (Oh & Schuler's
-- (2024) LMER on Natural Stories, rows that say why when the R engine did not run), with the model's display name and
-- size. mart_delta_loglik publishes it; the models that compare the fits read it here.
with cv as (
    select *, 'ok' as status from {{ ref('int_delta_loglik') }}
),

lmer as (
    select * from {{ ref('int_delta_loglik_lmer') }}
),

fits as (
    select * from cv
    union all by name
    select * from lmer
),

sizes as (
    select * from {{ ref('stg_model_table') }}
)

select
    f.corpus, f.measure, f.model_key, coalesce(s.display_name, f.model_key) as model_name, s.family as model_family,
    s.n_parameters, f.run_id, f.run_source, f.definition, f.method, f.status,
    f.n_words, f.n_rows, f.n_readers, f.n_folds, f.fold_seed,
    f.delta_loglik_nats_per_row, f.delta_loglik_se_nats_per_row,
    f.delta_loglik_ci_low_nats_per_row, f.delta_loglik_ci_high_nats_per_row,
    f.delta_loglik_total_nats, f.p_value, f.loglik_baseline_nats, f.loglik_full_nats,
    f.sum_surprisal_nats,
    -- typed: over no fits the Python model's empty list column has DuckDB type NULL (the contract wants double[])
    cast(f.fold_delta_nats_per_row as double[]) as fold_delta_nats_per_row
from fits as f
left join sizes as s using (model_key)
