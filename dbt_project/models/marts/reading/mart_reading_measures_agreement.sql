-- Cross-checks of the reading measures derived here from the fixations (int_eye_tracking_measures):
--   derived_vs_upstream_per_reader: per reader and word against the upstream's own per-reader measures
--     (UCL: pangoling data_frank2013_et_rt, raw.eye_tracking_measures_upstream; its 0 = NULL);
--   mean_null_ignoring_vs_published / mean_zero_filled_vs_published: per word, the mean over the readers of
--     a text against de Varda et al.'s published means (ucl_devarda/all_measures.csv RTfirstfix, RTfirstpass,
--     RTrightbound, RTgopast), once ignoring the readers without a value (skips: NULL) and once counting
--     them as 0 ms, to show which of the two the published numbers are.
-- One row per comparison, corpus and measure.
{%- set tolerance_ms = 1e-6 %}
with derived as (
    select * from {{ ref('int_eye_tracking_measures') }}
),

upstream as (
    select * from {{ ref('stg_eye_tracking_measures_upstream') }}
),

published as (
    select * from {{ ref('stg_ucl_published_word_measures') }}
),

per_reader as (
    select d.*, u.first_fixation_ms as u_first_fixation_ms, u.first_pass_ms as u_first_pass_ms,
        u.right_bounded_ms as u_right_bounded_ms, u.go_past_ms as u_go_past_ms, u.skipped as u_skipped
    from upstream as u
    inner join derived as d using (corpus, reader_id, doc_id, word_index)
),

unmatched_upstream as (
    select u.corpus, count(*) as n_unmatched
    from upstream as u
    anti join derived as d using (corpus, reader_id, doc_id, word_index)
    group by all
),

word_means as (
    select
        corpus, doc_id, word_index,
        avg(first_fixation_ms) as first_fixation_null_ignoring,
        avg(gaze_duration_ms) as first_pass_null_ignoring,
        avg(right_bounded_ms) as right_bounded_null_ignoring,
        avg(go_past_ms) as go_past_null_ignoring,
        avg(coalesce(first_fixation_ms, 0)) as first_fixation_zero_filled,
        avg(coalesce(gaze_duration_ms, 0)) as first_pass_zero_filled,
        avg(coalesce(right_bounded_ms, 0)) as right_bounded_zero_filled,
        avg(coalesce(go_past_ms, 0)) as go_past_zero_filled
    from derived
    group by all
),

per_word as (
    select m.*, p.rt_first_fixation_ms, p.rt_first_pass_ms, p.rt_right_bounded_ms, p.rt_go_past_ms
    from published as p
    inner join word_means as m using (corpus, doc_id, word_index)
),

unmatched_published as (
    select p.corpus, count(*) as n_unmatched
    from published as p
    anti join word_means as m using (corpus, doc_id, word_index)
    group by all
),

pairs as (
    {%- set per_reader_measures = [
        ('first_fixation', 'first_fixation_ms', 'u_first_fixation_ms', 'data_frank2013_et_rt RTfirstfix'),
        ('first_pass', 'gaze_duration_ms', 'u_first_pass_ms', 'data_frank2013_et_rt RTfirstpass'),
        ('right_bounded', 'right_bounded_ms', 'u_right_bounded_ms', 'data_frank2013_et_rt RTrightbound'),
        ('go_past', 'go_past_ms', 'u_go_past_ms', 'data_frank2013_et_rt RTgopast'),
        ('skipped', 'skipped_first_pass::int', 'u_skipped::int', 'data_frank2013_et_rt RTfirstfix = 0'),
    ] %}
    {%- for measure, ours, theirs, reference in per_reader_measures %}
    select 'derived_vs_upstream_per_reader' as comparison, corpus, '{{ measure }}' as measure,
        '{{ reference }}' as reference, {{ ours }}::double as derived_value, {{ theirs }}::double as reference_value
    from per_reader
    union all
    {%- endfor %}
    {%- set published_measures = [
        ('first_fixation', 'rt_first_fixation_ms', 'all_measures.csv RTfirstfix'),
        ('first_pass', 'rt_first_pass_ms', 'all_measures.csv RTfirstpass'),
        ('right_bounded', 'rt_right_bounded_ms', 'all_measures.csv RTrightbound'),
        ('go_past', 'rt_go_past_ms', 'all_measures.csv RTgopast'),
    ] %}
    {%- for variant in ['null_ignoring', 'zero_filled'] %}
    {%- set outer = loop %}
    {%- for measure, theirs, reference in published_measures %}
    select 'mean_{{ variant }}_vs_published' as comparison, corpus, '{{ measure }}' as measure,
        '{{ reference }}' as reference, {{ measure }}_{{ variant }} as derived_value, {{ theirs }} as reference_value
    from per_word
    {{ "union all" if not (outer.last and loop.last) }}
    {%- endfor %}
    {%- endfor %}
),

summary as (
    select
        comparison, corpus, measure, reference,
        count(*) as n_compared,
        count(*) filter (where derived_value is not null and reference_value is not null) as n_both_present,
        count(*) filter (where derived_value is null and reference_value is null) as n_both_null,
        count(*) filter (where (derived_value is null) != (reference_value is null)) as n_one_side_null,
        count(*) filter (where (derived_value is null and reference_value is null)
                            or abs(derived_value - reference_value) <= {{ tolerance_ms }}) as n_equal,
        avg(abs(derived_value - reference_value)) as mean_abs_diff,
        max(abs(derived_value - reference_value)) as max_abs_diff,
        corr(derived_value, reference_value) as pearson_r
    from pairs
    group by all
)

select
    s.comparison,
    s.corpus,
    s.measure,
    s.reference,
    s.n_compared,
    s.n_both_present,
    s.n_both_null,
    s.n_one_side_null,
    s.n_equal,
    s.n_equal / s.n_compared as share_equal,
    case when s.measure != 'skipped' then s.mean_abs_diff end as mean_abs_diff_ms,
    case when s.measure != 'skipped' then s.max_abs_diff end as max_abs_diff_ms,
    s.pearson_r,
    coalesce(case when s.comparison = 'derived_vs_upstream_per_reader' then ur.n_unmatched else up.n_unmatched end, 0)
        as n_reference_unmatched
from summary as s
left join unmatched_upstream as ur on ur.corpus = s.corpus
left join unmatched_published as up on up.corpus = s.corpus
