-- UCL per-reader eye-tracking measures as the upstream computed them (raw.eye_tracking_measures_upstream,
-- pangoling data_frank2013_et_rt.rda), typed; the file's 0 ms (= not fixated in first pass) is NULL already.
with source as (
{{ select_source_or_empty('eye_tracking', 'eye_tracking_measures_upstream') }}
),

renamed as (
    select * from source  -- typed by the source definition; nothing to rename
)

select * from renamed
