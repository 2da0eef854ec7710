-- One row per (context, response, UCL position with that context), typed from raw.cloze_responses.
-- response NULL = upstream's `nan` key (an empty response); 'unk' = upstream's zero-count pseudo-response.
with source as (
{{ select_source_or_empty('cloze', 'cloze_responses') }}
)

select
    *,
    (response is not distinct from 'unk') and response_count = 0 as is_unseen_placeholder
from source
