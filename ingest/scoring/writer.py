"""Former name of `ingest.scoring.store`, kept only for callers outside ingest/scoring that still import
it (tests/test_end_to_end.py uses `writer.run_dir`); new code imports `ingest.scoring.store`."""
from ingest.scoring.store import (SCHEMA, clean_temporaries, count_rows, done_doc_ids, list_array,  # noqa: F401
                                  next_part_number, part_files, run_dir, write_part)
