"""Words of the word-probability-sums diagnostic: the whitespace-delimited words of every enumerated
text (context + candidate word; ingest/scoring/diagnostics.py), with the text's context and the
end-of-text token string (to read p(end-of-text | context) from the scorer's top-k)."""


def model(dbt, session):
    from ingest.scoring.diagnostics import word_rows
    return word_rows()
