"""Cloze norms: the safe parser of UCL's cloze_laplace.txt on the real file, refusals of code and
truncation, Laplace count recovery, the Provo / UCL joins and the dbt cloze marts on real data."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from predictabase.core.config import paths as make_paths
from predictabase.core.errors import IngestError
from predictabase.ingest.datasets import cloze_norms
from predictabase.ingest.sources import readers
from predictabase.ingest.sources.definitions import dataset
from tests.helpers import q

DIST = dataset("ucl_cloze_distributions").file("distributions")
CLOZE_NAMES = ["provo", "ucl", "provo_cloze", "ucl_cloze", "ucl_cloze_distributions"]


@pytest.fixture(scope="module")
def distributions(mirror: Path) -> dict:
    return readers.python_literal((mirror / DIST.path).read_bytes(), DIST.path, DIST)


@pytest.fixture(scope="module")
def cloze_warehouse(mirror: Path, tmp_path_factory):
    """The two corpora and the three cloze jobs ingested from the mirror, dbt tag:cloze built."""
    from predictabase.ingest.datasets.registry import run_ingest
    from predictabase.ingest.sources.fetch import fetch_and_record

    p = make_paths(tmp_path_factory.mktemp("cloze") / "warehouse")
    for name in ["provo", "provo_cloze", "ucl", "ucl_cloze", "ucl_cloze_distributions"]:
        fetch_and_record(p, mirror, dataset=name, show_progress=False)
    counts = run_ingest(p, CLOZE_NAMES, show_progress=False)
    again = run_ingest(p, ["provo_cloze", "ucl_cloze", "ucl_cloze_distributions"], show_progress=False)
    build_norms(p)
    return p, counts, again


def build_norms(p) -> None:
    """dbt: the cloze norms and their parents, with only the tests whose parents are all built (tag:cloze also
    holds the model side, which needs scored runs; eager selection would pull in tests of models not built here)."""
    from predictabase.warehouse import dbt_build

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DBT_INDIRECT_SELECTION", "cautious")
        dbt_build(p, "+mart_cloze")


# --------------------------------------------------------------------------- the parser


def test_parser_on_the_real_file(distributions):
    d = distributions
    assert len(d) == 1610
    assert sum(len(v) for v in d.values()) == 44176
    assert sum(None in v for v in d.values()) == 84  # the bare `nan` keys (98 'nan' substrings incl. 'banana')
    assert d["A"]["cat"] == pytest.approx(0.056657223796033995, abs=1e-15)
    assert all(isinstance(k, str) for k in d) and all(v.get("unk") for v in d.values())


def test_without_the_option_nan_is_refused(mirror):
    spec = dataset("lm_game_vocabulary").file("tokens")  # a python_literal role without nan_keys
    with pytest.raises(IngestError, match=r"`nan` at line \d+, column \d+ \(only literal values"):
        readers.python_literal((mirror / DIST.path).read_bytes(), DIST.path, spec)


@pytest.mark.parametrize(
    "data, match",
    [
        (b"{'A': {'cat': __import__('os').system('touch /tmp/x')}}", r"not a Python literal: `__import__\('os'\)"),
        (b"{'A': {'cat': open('/etc/passwd').read()}}", r"not a Python literal: `open\('/etc/passwd'\).read\(\)"),
        (b"{'A': {'cat': nan}}", r"not a Python literal: `nan` at line 1, column 15"),  # nan only as a KEY
        (b"{'A': {nan: 0.5, nan: 0.5}}", r"repeated at line 1"),
        (b"{'A': {'cat': 0.5,\n 'dog':", r"truncated or malformed Python literal"),
        (b"", r"file is empty"),
    ],
)
def test_bad_files_are_refused_in_one_line(data, match, tmp_path):
    with pytest.raises(IngestError, match=match) as exc:
        readers.python_literal(data, DIST.path, DIST)
    assert "\n" not in str(exc.value) and DIST.path in str(exc.value)


def test_code_is_never_executed(tmp_path):
    marker = tmp_path / "ran"
    with pytest.raises(IngestError):
        readers.python_literal(f"{{'A': {{nan: open({str(marker)!r}, 'w')}}}}".encode(), DIST.path, DIST)
    assert not marker.exists()


def test_truncated_real_file_is_refused(mirror):
    data = (mirror / DIST.path).read_bytes()
    with pytest.raises(IngestError, match="truncated or malformed Python literal"):
        readers.python_literal(data[: len(data) // 2], DIST.path, DIST)


def test_laplace_count_recovery_on_a_known_context(distributions):
    counts, n, v = cloze_norms.laplace_counts(distributions["Arthur placed"], DIST.path, "Arthur placed")
    assert (n, v) == (81, 14) and n + v == 95
    assert counts["his"] == 46 and counts["the"] == 14 and counts["unk"] == 0
    assert distributions["Arthur placed"]["the"] == pytest.approx((14 + 1) / 95, abs=1e-15)
    counts, n, v = cloze_norms.laplace_counts(distributions["A"], DIST.path, "A")  # pooled over 3 sentences
    assert (n, v, counts["cat"]) == (241, 112, 19)


def test_laplace_refuses_inexact_probabilities():
    with pytest.raises(IngestError, match="is not \\(c\\+1\\)/10"):
        cloze_norms.laplace_counts({"a": 0.1, "b": 0.45, "c": 0.45}, DIST.path, "X")


# --------------------------------------------------------------------------- ingest and dbt on real data


def test_ingest_counts_and_idempotence(cloze_warehouse):
    p, counts, again = cloze_warehouse
    assert counts["provo_cloze"] == again["provo_cloze"] == 2730
    assert counts["ucl_cloze"] == again["ucl_cloze"] == 1726
    assert counts["ucl_cloze_distributions"] == again["ucl_cloze_distributions"] == 68040
    assert q(
        p,
        "select corpus, count(*), count(cloze_probability_published), count(distinct doc_id) "
        "from raw.cloze_norms group by 1 order by 1",
    ) == [("provo", 2730, 2647, 54), ("ucl", 1726, 1726, 205)]


def test_provo_join(cloze_warehouse):
    p, _, _ = cloze_warehouse
    # every row joins raw.words by (text_id, word_n) = (doc_id, native_id); the first word of each text has no norms
    assert q(
        p,
        "select count(*) from raw.cloze_norms n join raw.words w using (corpus, doc_id, word_index) "
        "where corpus = 'provo' and w.native_id = n.native_id and w.word = n.word",
    ) == [(2730,)]
    # 83 rows without norms: the first word of the 54 texts (57 rows: text 27 repeats it) and 26 other words
    assert q(
        p,
        "select word_index = 0, count(*) from raw.cloze_norms where corpus = 'provo' "
        "and cloze_probability_published is null group by 1 order by 1",
    ) == [(False, 26), (True, 57)]
    assert q(
        p, "select upstream_id, doc_id, word, upstream_word from raw.cloze_norms where not word_matches order by 1"
    ) == [("QID1305", "25", "90%", "0.9"), ("QID2687", "18", "the", "evolution")]
    assert q(p, "select count(*) from marts.mart_cloze where corpus = 'provo'") == [(2601,)]


def test_ucl_positions_and_context_keys(cloze_warehouse):
    p, _, _ = cloze_warehouse
    assert q(
        p,
        "select context_match, count(distinct context), count(distinct (doc_id, word_index)) "
        "from raw.cloze_responses group by 1 order by 1",
    ) == [("exact", 1388, 1501), ("punctuation_removed", 222, 225)]
    assert q(p, "select count(*) from raw.cloze_responses where response is null") == [(105,)]


def test_cloze_surprisal_of_a_known_word(cloze_warehouse):
    p, _, _ = cloze_warehouse
    [(word, ps, s_bits, s_nats, pub)] = q(
        p,
        "select m.word, m.cloze_probability_smoothed, m.cloze_surprisal_bits, m.cloze_surprisal_nats, "
        "m.cloze_probability_published from marts.mart_cloze m "
        "join raw.cloze_norms n using (corpus, doc_id, word_index) "
        "where corpus = 'ucl' and n.upstream_id = '577'",
    )  # 'Arthur placed' -> 'the'
    assert word == "the" and ps == pub == pytest.approx(0.1595744680851064, abs=1e-15)
    assert s_bits == pytest.approx(-math.log2(0.1595744680851064), abs=1e-12)
    assert s_nats == pytest.approx(1.8352445811677938, abs=1e-12)  # upstream cloze_s
    [(c, n, ps, s)] = q(
        p,
        "select response_count, n_responses, cloze_probability_smoothed, cloze_surprisal_bits "
        "from marts.mart_cloze where corpus = 'provo' and doc_id = '1' and word_index = 2",
    )
    assert ps == pytest.approx((c + 1) / (n + 2)) and s == pytest.approx(-math.log2((c + 1) / (n + 2)))


def test_cloze_entropy_against_upstream(cloze_warehouse, distributions):
    p, _, _ = cloze_warehouse
    [(h_bits, h_pub)] = q(
        p,
        "select m.cloze_entropy_bits, m.entropy_published_nats from marts.mart_cloze m join "
        "raw.cloze_norms n using (corpus, doc_id, word_index) where n.upstream_id = '718'",
    )
    d = distributions["His dark hair was just visible"]
    assert h_bits == pytest.approx(-sum(x * math.log2(x) for x in d.values()), abs=1e-12)
    assert h_bits * math.log(2) == pytest.approx(h_pub, abs=1e-9)  # upstream entropy: nats, smoothed
    [(exact, r)] = q(
        p,
        "select count(*) filter (where abs(cloze_entropy_nats - entropy_published_nats) < 1e-6), "
        "corr(cloze_entropy_nats, entropy_published_nats) from marts.mart_cloze where corpus = 'ucl'",
    )
    assert exact == 187 and r > 0.97
    assert q(p, "select count(*) from marts.mart_cloze where corpus = 'provo' and cloze_entropy_bits is not null") == [
        (0,)
    ]


# --------------------------------------------------------------------------- a user corpus's norms, the same lane


@pytest.fixture(scope="module")
def user_cloze(cloze_warehouse, tmp_path_factory):
    """A user's cloze norms are rows of raw.cloze_norms, as the shipped corpora's. Provo's first three
    texts declared twice with `corpus add` (a copy of the cloze warehouse): `provo_counts` with Provo's norms as
    counts (c = cp x N rounded, of N), `provo_p` with cp as a probability; the job declared_corpora, then dbt."""
    import shutil

    import polars as pl
    from typer.testing import CliRunner

    from predictabase.cli import app
    from predictabase.ingest.datasets.registry import run_ingest

    root = tmp_path_factory.mktemp("user_cloze")
    shutil.copytree(cloze_warehouse[0].warehouse, root / "warehouse")
    p = make_paths(root / "warehouse")
    docs = ("1", "2", "3")
    words = pl.DataFrame(
        q(
            p,
            "select doc_id, native_id, word from raw.words where corpus = 'provo' and doc_id in "
            "(?, ?, ?) order by doc_id, word_index",
            *docs,
        ),
        schema=["text_id", "word_id", "word"],
        orient="row",
    )
    norms = pl.DataFrame(
        q(
            p,
            "select doc_id, native_id, response_count, n_responses, cloze_probability "
            "from marts.mart_cloze where corpus = 'provo' and doc_id in (?, ?, ?)",
            *docs,
        ),
        schema=["text_id", "word_id", "response_count", "n_responses", "cloze_probability"],
        orient="row",
    )
    words.write_csv(root / "words.csv")
    norms.select("text_id", "word_id", "response_count", "n_responses").write_csv(root / "counts.csv")
    norms.select("text_id", "word_id", "cloze_probability").write_csv(root / "p.csv")
    # provo_counts also brings its own frequencies: wordfreq's English Zipf values, the first word's left out
    import wordfreq

    words.slice(1).with_columns(
        zipf_frequency=pl.col("word").map_elements(lambda w: wordfreq.zipf_frequency(w, "en"), return_dtype=pl.Float64)
    ).drop("word").write_csv(root / "f.csv")
    for name, f, more in (
        ("provo_counts", "counts.csv", ["--frequencies", str(root / "f.csv")]),
        ("provo_p", "p.csv", []),
    ):
        res = CliRunner().invoke(
            app,
            [
                "corpus",
                "add",
                name,
                "--texts",
                str(root / "words.csv"),
                "--cloze",
                str(root / f),
                *more,
                "--warehouse",
                str(p.warehouse),
            ],
        )
        assert res.exit_code == 0, res.output
    run_ingest(p, ["declared_corpora"], show_progress=False)
    build_norms(p)
    return p, norms, words


COLUMNS = (
    "doc_id, word_index, word, n_responses, response_count, cloze_probability, cloze_probability_smoothed, "
    "smoothing, cloze_surprisal_bits, cloze_surprisal_nats, cloze_entropy_bits, n_upstream_rows"
)


def test_a_users_cloze_norms_are_rows_of_the_shipped_table(user_cloze):
    p, norms, _ = user_cloze
    assert q(
        p,
        "select table_name from information_schema.tables where table_schema = 'raw' "
        "and table_name like '%cloze%' order by 1",
    ) == [("cloze_norms",), ("cloze_responses",)]
    assert q(
        p,
        "select corpus, count(*), count(response_count), count(cloze_probability_published), "
        "count(distinct smoothing) from raw.cloze_norms where corpus like 'provo_%' group by 1 order by 1",
    ) == [("provo_counts", norms.height, norms.height, 0, 1), ("provo_p", norms.height, 0, norms.height, 1)]


def test_a_users_counts_give_what_provos_published_norms_give(user_cloze):
    """The same words and counts by the user's lane and by Provo's: the same probabilities, smoothing and surprisal
    (Provo's p is its published share cp, which Provo rounds to 9 decimals; the user's is c / N: equal to 5e-10)."""
    p, norms, _ = user_cloze
    provo = q(
        p,
        f"select {COLUMNS} from marts.mart_cloze where corpus = 'provo' and doc_id in ('1', '2', '3') "
        "order by doc_id, word_index",
    )
    mine = q(p, f"select {COLUMNS} from marts.mart_cloze where corpus = 'provo_counts' order by doc_id, word_index")
    assert len(mine) == len(provo) == norms.height > 100
    for a, b in zip(mine, provo):
        assert a[:5] == b[:5] and a[7] == b[7] == "add_one_binary" and a[10] is b[10] is None
        assert a[5] == pytest.approx(b[5], abs=5e-10)
        assert a[6] == b[6] and a[8] == b[8] and a[9] == b[9]  # (c + 1) / (N + 2), and its surprisal: the same SQL
        assert a[11] == 1 and a[6] == (a[4] + 1) / (a[3] + 2)


def test_a_users_probabilities_are_taken_as_given(user_cloze):
    """A probability without N is not smoothed: p = 0 has no surprisal (NULL, the word leaves PNC), p = 1 has 0."""
    p, norms, _ = user_cloze
    rows = q(
        p,
        "select m.doc_id, w.native_id, cloze_probability, cloze_probability_smoothed, smoothing, "
        "cloze_surprisal_bits, cloze_surprisal_nats, n_responses, response_count from marts.mart_cloze m "
        "join raw.words w using (corpus, doc_id, word_index) where corpus = 'provo_p'",
    )
    assert len(rows) == norms.height
    given = dict(zip(zip(norms["text_id"], norms["word_id"]), norms["cloze_probability"]))
    zeros = 0
    for doc_id, word_id, prob, smoothed, smoothing, bits, nats, n, c in rows:
        cp = given[(doc_id, word_id)]
        assert prob == smoothed == cp and smoothing == "none" and n is None and c is None
        if cp == 0:
            zeros += 1
            assert bits is None and nats is None
        else:
            assert bits == pytest.approx(-math.log2(cp), abs=1e-12) and nats == pytest.approx(-math.log(cp), abs=1e-12)
    assert zeros > 10  # the NULL branch is exercised (Provo words no one guessed)


def test_a_users_frequencies_are_rows_of_the_shipped_table(user_cloze):
    """A user's own frequency file is the partition frequency_source 'user' of raw.word_frequencies (the
    table wordfreq's values of every corpus are in), one row per word of the file, the value as given."""
    import wordfreq

    p, _, words = user_cloze
    assert q(
        p,
        "select table_name from information_schema.tables where table_schema = 'raw' and table_name like '%frequenc%'",
    ) == [("word_frequencies",)]
    rows = q(
        p,
        "select f.doc_id, w.native_id, f.word, f.zipf_frequency, f.lookup_form, f.source_path "
        "from raw.word_frequencies f join raw.words w using (corpus, doc_id, word_index) "
        "where corpus = 'provo_counts' and frequency_source = 'user' order by f.doc_id, f.word_index",
    )
    assert len(rows) == words.height - 1 > 100
    bad = [
        r
        for r in rows
        if not (
            r[3] == wordfreq.zipf_frequency(r[2], "en") and r[4] is None and r[5] == "user/provo_counts/frequencies.csv"
        )
    ]  # the declared copy
    assert not bad, bad[:3]
    assert q(
        p, "select count(*) from raw.word_frequencies where corpus <> 'provo_counts' or frequency_source <> 'user'"
    ) == [(0,)]  # the cloze warehouse ran no wordfreq job
