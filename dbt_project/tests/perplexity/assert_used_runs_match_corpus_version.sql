-- Data-quality check (an error: wrong data stops the build): a scored run used by the marts should have scored the
-- corpus as it is now in raw.documents (same corpus_version). A mismatch means the corpus was re-ingested with
-- different content after scoring: rescore it. Imported runs are not checked.
select r.run_id, r.model_key, r.corpus, r.corpus_version as run_corpus_version,
       d.corpus_version as documents_corpus_version
from {{ ref('int_runs') }} as r
inner join (select distinct corpus, corpus_version from {{ ref('stg_documents') }}) as d using (corpus)
where r.used_in_marts and r.source = 'scored' and r.corpus_version is distinct from d.corpus_version
