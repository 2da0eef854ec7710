-- No eye-tracking duration is 0 ms, and a word skipped in first pass has NULL first-pass durations (never 0):
-- the rows returned break that (tag reading).
select 'mart_eye_tracking_measures' as mart, corpus, reader_id, doc_id, word_index, skipped_first_pass,
    first_fixation_ms, gaze_duration_ms, right_bounded_ms, go_past_ms, total_reading_time_ms
from {{ ref('mart_eye_tracking_measures') }}
where first_fixation_ms = 0 or gaze_duration_ms = 0 or right_bounded_ms = 0 or go_past_ms = 0
    or total_reading_time_ms = 0
    or (skipped_first_pass and (first_fixation_ms is not null or gaze_duration_ms is not null
                                or right_bounded_ms is not null or go_past_ms is not null))
    or (not skipped_first_pass and (first_fixation_ms is null or gaze_duration_ms is null
                                    or right_bounded_ms is null or go_past_ms is null))
union all
select 'mart_eye_tracking_word_means', corpus, null, doc_id, word_index, null,
    mean_first_fixation_ms, mean_gaze_duration_ms, mean_right_bounded_ms, mean_go_past_ms, mean_total_reading_time_ms
from {{ ref('mart_eye_tracking_word_means') }}
where mean_first_fixation_ms = 0 or mean_gaze_duration_ms = 0 or mean_right_bounded_ms = 0 or mean_go_past_ms = 0
    or mean_total_reading_time_ms = 0
