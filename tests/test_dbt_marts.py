"""dbt marts over a small real warehouse, checked against an independent polars/numpy computation.

The fixture (tests/dbt_fixtures.py) writes raw tables and token-score Parquet in the contract
shape from real upstream files: GPT-3 davinci's real log-probabilities on the Natural Stories,
and the UCL sentences scored in several runs (old / newest / --limit / incomplete).
"""

from __future__ import annotations

import json
import math

import duckdb
import pytest

from predictabase.core.config import paths as make_paths
from predictabase.core.errors import BuildError
from predictabase.warehouse import dbt_build, publish

from .dbt_fixtures import expected_metrics, numpy_bootstrap

# everything this project's perplexity / home-page marts need: the domains core and perplexity (dbt
# tags, one per models/<layer>/<domain> folder); the pairwise and wild marts are not built here
SELECT = "tag:core tag:perplexity"
MARTS = ["mart_build_info", "mart_model_perplexity", "mart_models", "mart_sources", "mart_warehouse_tables"]


@pytest.fixture(scope="module")
def built(dbt_fixture_built):
    """tests/dbt_fixtures.py's warehouse, `dbt build --select SELECT` + publish (tests/conftest.py, once a session)."""
    return dbt_fixture_built


def marts(fx, sql: str, params=None):
    with duckdb.connect(str(fx.paths.marts), read_only=True) as con:
        cur = con.execute(sql, params or [])
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, row)) for row in cur.fetchall()]


def perplexity_rows(fx) -> dict[tuple[str, str], dict]:
    return {(r["model_key"], r["corpus"]): r for r in marts(fx, "SELECT * FROM mart_model_perplexity")}


def test_published_snapshot_holds_the_marts(built):
    names = {
        r["table_name"]
        for r in marts(built, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'")
    }
    assert set(MARTS) <= names
    assert not list(built.paths.warehouse.glob(".marts-*")), "temporary snapshot left behind"
    info = marts(built, "SELECT * FROM mart_build_info")
    assert len(info) == 1 and info[0]["dbt_version"].startswith("1.11")


def test_run_selection_latest_full_complete_run(built):
    rows = perplexity_rows(built)
    assert {k: r["run_id"] for k, r in rows.items()} == built.expected_runs
    models = {r["run_id"]: r for r in marts(built, "SELECT * FROM mart_models")}
    # every complete run is listed, the incomplete one is not
    assert set(models) == set(built.expected_runs.values()) | built.unused_runs
    assert not (set(models) & built.incomplete_runs)
    assert {rid for rid, r in models.items() if r["used_in_marts"]} == set(built.expected_runs.values())
    # the newest ucl run is a --limit run: listed, never used; a model with only limited runs has no mart row
    assert models["ucllim0000000003"]["run_limit"] == 5 and not models["ucllim0000000003"]["used_in_marts"]
    assert ("only-limited", "ucl") not in rows


def test_metrics_match_independent_computation(built):
    rows = perplexity_rows(built)
    for key, run_id in built.expected_runs.items():
        exp, got = expected_metrics(built, run_id), rows[key]
        for col in ("n_docs", "n_tokens", "n_chars", "n_bytes", "n_words"):
            assert got[col] == exp[col], (key, col)
        for col in (
            "total_surprisal_nats",
            "token_perplexity",
            "bits_per_byte",
            "bits_per_char",
            "word_perplexity",
            "bits_per_word",
        ):
            assert got[col] == pytest.approx(exp[col], rel=1e-9), (key, col)
        assert got["mean_surprisal_bits"] == pytest.approx(exp["total_surprisal_nats"] / math.log(2) / exp["n_tokens"])
        assert got["normalized_perplexity"] == pytest.approx(got["token_perplexity"] / got["vocab_size"])


def test_imported_gpt3_first_tokens_not_scored(built):
    got = perplexity_rows(built)[("gpt3-davinci", "natural_stories")]
    # 12373 upstream tokens in 10 stories, the first of each unscored
    assert got["n_tokens"] == 12373 - 10
    assert got["source"] == "imported"
    # vocab size unknown to the imported run: the documented GPT-2 BPE size
    assert got["vocab_size"] == 50257 and got["vocab_size_source"] == "reference"
    # the unscored first tokens ('If', ...) are not counted: scored text starts after them
    with duckdb.connect(str(built.paths.duckdb), read_only=True) as con:
        (text_chars,) = con.execute(
            "SELECT sum(n_chars) FROM raw.documents WHERE corpus = 'natural_stories'"
        ).fetchone()
        (first_chars,) = con.execute(
            f"SELECT sum(char_end - char_start) FROM read_parquet('{built.run_dirs['gpt3run00000001']}/*.parquet') "
            "WHERE token_index = 0"
        ).fetchone()
    assert got["n_chars"] == text_chars - first_chars and first_chars > 0


def test_prefix_and_non_ascii(built):
    got = perplexity_rows(built)[("test-lm", "lm_game")]
    with duckdb.connect(str(built.paths.duckdb), read_only=True) as con:
        prefix_chars, prefix_bytes = con.execute(
            "SELECT sum(score_prefix_chars), sum(strlen(substr(text, 1, score_prefix_chars))) "
            "FROM raw.documents WHERE corpus = 'lm_game'"
        ).fetchone()
    assert got["n_chars"] == prefix_chars and got["n_bytes"] == prefix_bytes and prefix_bytes > prefix_chars
    assert got["bits_per_char"] > got["bits_per_byte"]


def test_bootstrap_interval(built):
    rows = perplexity_rows(built)
    for key, run_id in built.expected_runs.items():
        r = rows[key]
        assert r["bootstrap_replicates"] == 1000
        assert r["token_perplexity_ci_low"] < r["token_perplexity"] < r["token_perplexity_ci_high"], key
        assert r["bits_per_byte_ci_low"] < r["bits_per_byte"] < r["bits_per_byte_ci_high"], key
        exp = expected_metrics(built, run_id)
        lo, hi = numpy_bootstrap(exp["doc_nats"], exp["doc_tokens"])
        width = hi - lo
        assert abs(r["token_perplexity_ci_low"] - lo) < 0.2 * width, (key, r["token_perplexity_ci_low"], lo)
        assert abs(r["token_perplexity_ci_high"] - hi) < 0.2 * width, (key, r["token_perplexity_ci_high"], hi)


def test_bootstrap_is_deterministic(built):
    """Re-running the compiled bootstrap model over the same data gives identical intervals."""
    compiled = next((built.paths.warehouse / "dbt" / "target" / "compiled").rglob("int_perplexity_bootstrap.sql"))
    sql = compiled.read_text()
    with duckdb.connect(str(built.paths.duckdb), read_only=True) as con:
        first = con.execute(f"SELECT * FROM ({sql}) ORDER BY run_id").fetchall()
        second = con.execute(f"SELECT * FROM ({sql}) ORDER BY run_id").fetchall()
        stored = con.execute("SELECT * FROM intermediate.int_perplexity_bootstrap ORDER BY run_id").fetchall()
    assert first == second == stored


def test_home_page_marts(built):
    sources = marts(built, "SELECT * FROM mart_sources")
    assert all(r["all_verified"] and r["n_files"] == r["n_verified"] for r in sources)
    from predictabase.ingest.sources.catalog import load_catalog

    assert sum(r["n_files"] for r in sources) == len(load_catalog())
    tables = {r["table_name"]: r for r in marts(built, "SELECT * FROM mart_warehouse_tables")}
    assert tables["raw.documents"]["n_rows"] == 10 + 205 + 3
    assert tables["raw.game_doc_tokens"] == {
        "table_name": "raw.game_doc_tokens",
        "layer": "raw",
        "n_rows": 0,
        "present": False,
    }
    assert tables["mart_model_perplexity"]["n_rows"] == len(built.expected_runs)


def test_empty_warehouse_builds(tmp_path):
    """No raw table and no Parquet yet: staging yields empty typed relations, every mart builds."""
    p = make_paths(tmp_path / "warehouse")
    assert dbt_build(p, select=SELECT) == []
    publish(p)
    with duckdb.connect(str(p.marts), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM mart_model_perplexity").fetchone() == (0,)
        assert con.execute("SELECT count(*) FROM mart_build_info").fetchone() == (1,)
        tables = dict(
            con.execute("SELECT table_name, present FROM mart_warehouse_tables WHERE layer = 'raw'").fetchall()
        )
    manifest = json.loads((p.warehouse / "dbt" / "target" / "manifest.json").read_text())
    declared = {f"raw.{s['identifier']}" for s in manifest["sources"].values() if s["schema"] == "raw"}
    assert {"raw.documents", "raw.words", "raw.source_files", "raw.cloze_norms"} <= declared
    assert tables == {t: False for t in declared}  # every raw source dbt declares, none present yet


def test_schema_test_failure_raises(built):
    """A deliberately broken row (a run with an unknown `source`) makes a schema test fail.

    Runs last, on the session's fixture warehouse (dbt can then parse partially); the published snapshot
    the other tests (and tests/test_dashboard_browser.py) read is not touched, and the run file is restored
    afterwards.
    """
    run_json = built.run_dirs["uclnew0000000002"] / "_run.json"
    good = run_json.read_text()
    bad = json.loads(good)
    bad["source"] = "bogus"
    run_json.write_text(json.dumps(bad))
    try:
        with pytest.raises(BuildError) as err:
            dbt_build(
                built.paths,
                select="path:models/staging/core path:models/staging/perplexity "
                "path:models/intermediate/perplexity path:seeds/perplexity mart_models",
            )
    finally:
        run_json.write_text(good)
    assert "accepted_values_mart_models_source" in str(err.value)


def _copy_of(built, tmp_path):
    """A copy of the session's fixture warehouse to break (the shared one stays as it is)."""
    import shutil

    p = make_paths(tmp_path / "warehouse")
    shutil.copytree(built.paths.warehouse, p.warehouse)
    return p


PERPLEXITY_SELECT = (
    "path:models/staging/core path:models/staging/perplexity path:models/intermediate/perplexity "
    "path:seeds/perplexity path:tests/perplexity"
)


def test_token_spans_that_do_not_match_their_document_fail_the_build(built, tmp_path):
    """`assert_token_spans_match_documents` once only warned, and the warnings were thrown away, so broken
    character spans (which make n_chars and n_words wrong) failed nothing. Now the build fails and names it,
    and the published snapshot is the one from before."""
    import pyarrow.parquet as pq

    p = _copy_of(built, tmp_path)
    assert dbt_build(p, select=PERPLEXITY_SELECT) == []  # as built: no warning, no failure
    before = p.marts.read_bytes()
    run_dir = p.token_scores / built.run_dirs["uclnew0000000002"].relative_to(built.paths.token_scores)
    part = sorted(run_dir.glob("part-*.parquet"))[0]
    table = pq.read_table(part)
    texts = table.column("token_text").to_pylist()
    texts[1] = texts[1] + "x"  # one token's text no longer the document's characters at its span
    pq.write_table(
        table.set_column(table.schema.get_field_index("token_text"), "token_text", __import__("pyarrow").array(texts)),
        part,
    )
    with pytest.raises(BuildError) as err:
        dbt_build(p, select=PERPLEXITY_SELECT)
    assert "assert_token_spans_match_documents" in str(err.value)
    assert p.marts.read_bytes() == before


def test_a_run_scored_on_another_corpus_version_fails_the_build(built, tmp_path):
    """`assert_used_runs_match_corpus_version` once only warned: a corpus re-ingested with other content
    after scoring kept feeding the marts in silence. Now the build fails and names it."""
    p = _copy_of(built, tmp_path)
    run_json = p.token_scores / built.run_dirs["uclnew0000000002"].relative_to(built.paths.token_scores) / "_run.json"
    run = json.loads(run_json.read_text())
    run["corpus_version"] = "0" * 64
    run_json.write_text(json.dumps(run))
    with pytest.raises(BuildError) as err:
        dbt_build(p, select=PERPLEXITY_SELECT)
    assert "assert_used_runs_match_corpus_version" in str(err.value)
