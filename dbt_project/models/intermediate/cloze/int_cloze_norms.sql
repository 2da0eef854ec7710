-- One row per corpus word with published cloze norms: Provo rows without norms dropped; where Provo repeats a
-- word number (text 27 listed twice; text 18 word 3 also as 'evolution'), the row whose word matches the corpus
-- word, then the first in the file, is kept.
with ranked as (
    select
        *,
        row_number() over (
            partition by corpus, doc_id, word_index
            order by word_matches desc, upstream_row asc
        ) as rank_in_word,
        count(*) over (partition by corpus, doc_id, word_index) as n_upstream_rows
    from {{ ref('stg_cloze_norms') }}
    where has_norms
)

select * exclude (rank_in_word)
from ranked
where rank_in_word = 1
