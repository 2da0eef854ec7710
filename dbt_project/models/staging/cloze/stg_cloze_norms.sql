-- One row per upstream cloze-norms row (Provo, UCL and user corpora), typed from raw.cloze_norms; has_norms marks
-- the rows that carry a probability or counts (Provo's first word of each text has neither).
with source as (
{{ select_source_or_empty('cloze', 'cloze_norms') }}
)

select
    *,
    cloze_probability_published is not null or response_count is not null as has_norms
from source
