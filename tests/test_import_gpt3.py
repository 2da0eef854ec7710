"""GPT-3 davinci log-probs on the Natural Stories: real file, counts, NULLs, spans."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from predictabase.core.config import paths as make_paths
from predictabase.core.errors import IngestError
from predictabase.ingest.datasets.gpt3_natural_stories import CSV_PATH, import_gpt3_natural_stories
from predictabase.ingest.scoring import store
from predictabase.ingest.sources.catalog import by_path
from predictabase.ingest.sources.fetch import fetch_one
from tests.scoring_helpers import IMPORTED_RUN_KEYS, natural_stories, write_documents


@pytest.fixture
def ns_paths(tmp_path, mirror):
    p = make_paths(tmp_path / "warehouse")
    fetch_one(by_path(CSV_PATH), p, mirror)
    stories = natural_stories(mirror)
    write_documents(p, "natural_stories", list(stories.values()), [str(k) for k in stories])
    return p, stories


def test_import_real_file(ns_paths):
    p, stories = ns_paths
    run = import_gpt3_natural_stories(p)
    assert run["status"] == "imported" and run["source"] == "imported" and run["n_tokens"] == 12373
    assert run["text_differences_chars"] == {"2": 1}  # GPT-3 'peeked' vs all_stories.tok 'peaked'
    assert set(run) == IMPORTED_RUN_KEYS | {"status"}
    rdir = store.run_dir(p.token_scores, "gpt3-davinci", "natural_stories", run["run_id"])
    part = rdir / "part-00000.parquet"
    # GPT-3's log-probabilities are decimals, not float32 numbers: stored as double (store.file_table)
    assert pq.read_schema(part).field("logprob_nats").type == pa.float64()
    t = store.read_part(part)
    assert t.schema == store.SCHEMA
    df = t.to_pandas()
    assert len(df) == 12373 and sorted(df.doc_id.unique(), key=int) == [str(i) for i in range(1, 11)]
    assert df.groupby("doc_id").size()["1"] == 1289
    for col in (
        "token_id",
        "rank",
        "entropy_nats",
        "topk_token_ids",
        "topk_tokens",
        "topk_logprobs_nats",
        "logprob_word_initial_nats",
    ):
        assert df[col].isna().all(), col
    first = df[df.token_index == 0]
    assert len(first) == 10 and first.logprob_nats.isna().all()
    assert df.logprob_nats.isna().sum() == 10 and (df.logprob_nats.dropna() <= 0).all()
    row = df[(df.doc_id == "1") & (df.token_index == 1)].iloc[0]
    assert row.token == " you" and abs(row.logprob_nats - (-0.7762714)) < 1e-9 and row.context_tokens == 1
    for doc_id, g in df.groupby("doc_id"):
        text = stories[int(doc_id)]
        g = g.sort_values("token_index")
        assert g.char_start.iloc[0] == 0 and g.char_end.iloc[-1] == len(text)
        assert (g.char_start.values[1:] == g.char_end.values[:-1]).all()
        assert "".join(g.token_text) == text
        if doc_id != "2":
            assert (g.token == g.token_text).all()
    odd = df[(df.doc_id == "2") & (df.token != df.token_text)]
    assert list(odd.token) == [" peek"] and list(odd.token_text) == [" peak"]  # GPT-3: " peek" + "ed"
    again = import_gpt3_natural_stories(p)
    assert again["status"] == "already complete" and again["run_id"] == run["run_id"]
    assert {k: v for k, v in again.items() if k != "status"} == {k: v for k, v in run.items() if k != "status"}


def test_bad_file_names_the_file(ns_paths, monkeypatch, tmp_path):
    p, _ = ns_paths
    from predictabase.ingest.datasets import gpt3_natural_stories as imports_gpt3

    bad = tmp_path / "bad.csv"
    bad.write_text("token,logprob,offset,model\nIf,,0,davinci\n")
    monkeypatch.setattr(imports_gpt3, "verified_path", lambda sf, paths: bad)
    with pytest.raises(IngestError, match="bad.csv"):
        import_gpt3_natural_stories(p)
    shuffled = tmp_path / "shuffled.csv"
    lines = (p.raw / CSV_PATH).read_text().splitlines()
    lines[2], lines[3] = lines[3], lines[2]
    shuffled.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(imports_gpt3, "verified_path", lambda sf, paths: shuffled)
    with pytest.raises(IngestError, match="shuffled.csv.*offset"):
        import_gpt3_natural_stories(p)
    assert not p.token_scores.exists()


def test_tampered_fetch_is_refused(ns_paths):
    p, _ = ns_paths
    f = p.raw / CSV_PATH
    f.write_text(f.read_text().replace("-0.7762714", "-0.1"))
    with pytest.raises(IngestError, match="sha256"):
        import_gpt3_natural_stories(p)
