"""MECO's eye-tracking means in 11 languages as shipped corpora (ingest/datasets/meco.py, one corpus per
language), Wilcox et al. (2023)'s four models imported as runs, and their delta log-likelihood replayed
(int_xlang_delta_loglik) equal to their steps run in R (tests/r/wilcox_dll.R) to 1e-9 nats; word lengths counted
in every script. The warehouse is the session's `refreshed` one (tests/conftest.py): every ingest job, a full dbt
build, the tiny GPT-2 scoring MECO Korean among others.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import unicodedata
from pathlib import Path

import pytest

from tests.helpers import q

R_SCRIPT = Path(__file__).with_name("r") / "wilcox_dll.R"
MERGED = "wilcox_xlang/merged_data"
#: corpus -> Wilcox et al.'s language code
UPSTREAM = {
    "meco_nl": "du",
    "meco_en": "en",
    "meco_fi": "fi",
    "meco_de": "ge",
    "meco_el": "gr",
    "meco_he": "he",
    "meco_it": "it",
    "meco_ko": "ko",
    "meco_ru": "ru",
    "meco_es": "sp",
    "meco_tr": "tr",
}
MEASURES = {"firstfix_rt": "first_fixation", "gaze_rt": "gaze_duration", "total_rt": "total_reading_time"}
MODELS = {"mgpt_sc": "mgpt-sc", "mgpt_lc": "mgpt-lc", "monot_30m": "monot-30m", "monot_all": "monot-all"}


def their_rows(mirror: Path, code: str) -> list[dict[str, str]]:
    with open(mirror / MERGED / f"{code}.csv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def their_words(rows: list[dict[str, str]]) -> dict[tuple[int, int], dict[str, str]]:
    """(trialid, ianum) -> a row of the word (every model's row of a word agrees on the word and its means)."""
    return {(int(r["trialid"]), int(r["ianum"])): r for r in rows}


@pytest.fixture(scope="module")
def wh(refreshed):
    assert refreshed.result.returncode == 0, refreshed.result.stderr[-3000:]
    return refreshed.paths


@pytest.mark.parametrize("corpus", list(UPSTREAM))
def test_each_language_is_a_corpus_of_its_words_and_means(corpus, wh, mirror):
    """Its 12 texts are its words in order joined by single spaces (every model's words: the mGPT rows miss
    some), declared in its language; every mean > 0 ms is a row, a mean of 0 ms (nobody fixated the word) none."""
    words = their_words(their_rows(mirror, UPSTREAM[corpus]))
    texts = {}
    for (trial, _ia), r in sorted(words.items()):
        texts.setdefault(str(trial), []).append(r["ia"])
    db = wh.duckdb
    assert dict(q(db, "SELECT doc_id, text FROM raw.documents WHERE corpus = ?", corpus)) == {
        t: " ".join(ws) for t, ws in texts.items()
    }
    assert len(texts) == 12
    got = q(
        db,
        "SELECT doc_id, word_index, native_id, word FROM raw.words WHERE corpus = ? ORDER BY doc_id::int, word_index",
        corpus,
    )
    assert got == [
        (str(t), i, str(ia), r["ia"])
        for t in sorted(int(x) for x in texts)
        for i, ((_, ia), r) in enumerate(sorted((k, v) for k, v in words.items() if k[0] == t))
    ]
    for col, measure in MEASURES.items():
        want = sorted(
            (str(t), str(ia), float(r[col])) for (t, ia), r in words.items() if r[col] != "NA" and float(r[col]) > 0
        )
        rts = q(
            db,
            "SELECT doc_id, native_id, rt_ms FROM raw.reading_times WHERE corpus = ? AND measure = ? "
            "AND reader_id IS NULL ORDER BY ALL",
            corpus,
            measure,
        )
        assert rts == want, (corpus, measure)
    zeros = sum(1 for r in words.values() if r["gaze_rt"] != "NA" and float(r["gaze_rt"]) == 0)
    assert len(words) - zeros == len(
        q(db, "SELECT 1 FROM raw.reading_times WHERE corpus = ? AND measure = 'gaze_duration'", corpus)
    )
    language = {"meco_nl": "nl", "meco_de": "de", "meco_el": "el", "meco_es": "es"}.get(corpus, corpus[5:])
    assert q(
        wh.marts,
        "SELECT language, origin, n_texts, n_words, reading_measures FROM mart_corpora WHERE corpus = ?",
        corpus,
    ) == [(language, "shipped", 12, len(words), ["first_fixation", "gaze_duration", "total_reading_time"])]


def test_the_odd_words_are_kept_as_printed(wh, mirror):
    """Korean's one interest area with a no-break space inside stays one word; a text of every language lacks a
    word position (trial 3 of most), so native_id skips it while word_index does not; Russian's mGPT (short
    context) rows cover a third of the words, but the corpus has all of them."""
    db = wh.duckdb
    assert q(
        db, "SELECT native_id, word FROM raw.words WHERE corpus = 'meco_ko' AND word LIKE '%' || chr(160) || '%'"
    ) == [("157", "많다.\u00a0다만")]
    for corpus in UPSTREAM:
        gaps = q(
            db,
            "SELECT count(*) FROM (SELECT native_id::int - word_index - 1 AS skipped FROM raw.words "
            "WHERE corpus = ?) WHERE skipped > 0",
            corpus,
        )
        assert gaps[0][0] > 0, corpus
    assert q(db, "SELECT count(*) FROM raw.wilcox_xlang_words WHERE corpus = 'meco_ru' AND model_key = 'mgpt-sc'") == [
        (618,)
    ]
    assert q(db, "SELECT count(*) FROM raw.words WHERE corpus = 'meco_ru'") == [(1830,)]


def _length(word: str) -> int:
    """Independently: the characters between the first and the last letter, digit or mark of any script."""
    keep = [i for i, ch in enumerate(word) if unicodedata.category(ch)[0] in "LNM"]
    return keep[-1] - keep[0] + 1 if keep else 0


def test_word_length_counts_the_letters_of_every_script(wh):
    """The regressions' word length: Cyrillic, Greek, Hebrew and Hangul letters count (RE2's [:alnum:] is ASCII
    only and gave them 0), the punctuation at a word's ends does not, for every word of every language."""
    meco = "(" + ", ".join(f"'{c}'" for c in UPSTREAM) + ")"
    rows = q(wh.duckdb, f"SELECT corpus, word, length_chars FROM intermediate.int_reading_words WHERE corpus IN {meco}")
    assert len(rows) == q(wh.duckdb, f"SELECT count(*) FROM raw.words WHERE corpus IN {meco}")[0][0] > 20_000
    wrong = [(c, w, n, _length(w)) for c, w, n in rows if n != _length(w)]
    assert not wrong, wrong[:10]
    by_word = {w: n for _, w, n in rows}
    assert [by_word[w] for w in ("мифологии.", "μυθολογία,", "העתיקה,", "여겨졌다.", "—")] == [9, 9, 6, 4, 0]
    assert {c for c, _, _ in rows} == set(UPSTREAM)


def test_their_models_are_imported_runs(wh, mirror):
    """Each language has Wilcox et al.'s four models as runs of word surprisal (LW, as given: bits = their surp),
    one per word they have; and our pipeline's delta log-likelihood for them on every measure."""
    marts = wh.marts
    for corpus, code in UPSTREAM.items():
        rows = their_rows(mirror, code)
        n = {m: sum(1 for r in rows if r["model"] == m) for m in MODELS}
        got = dict(
            q(
                marts,
                "SELECT model_key, count(*) FROM mart_word_surprisal WHERE corpus = ? "
                "AND run_source = 'imported_words' GROUP BY 1",
                corpus,
            )
        )
        assert got == {MODELS[m]: k for m, k in n.items()}, corpus
    one = their_rows(mirror, "gr")[100]
    got = q(
        marts,
        "SELECT surprisal_lw_bits, surprisal_wt_bits, definitions FROM mart_word_surprisal "
        "WHERE corpus = 'meco_el' AND run_id = ? AND native_word_id = ? AND doc_id = ?",
        f"wilcox-xlang:{MODELS[one['model']]}",
        one["ianum"],
        one["trialid"],
    )
    assert got == [(pytest.approx(float(one["surp"]), abs=1e-12), None, "LW only (as given)")]
    dll = q(
        marts,
        "SELECT count(DISTINCT corpus), count(DISTINCT measure), count(DISTINCT model_key) "
        "FROM mart_delta_loglik WHERE corpus LIKE 'meco_%' AND method = 'cv_means' "
        "AND run_source = 'imported_words'",
    )
    assert dll == [(11, 3, 4)]


@pytest.mark.skipif(shutil.which("Rscript") is None, reason="needs Rscript (make r-engine)")
def test_their_delta_loglik_equals_their_script_run_in_r(wh, mirror, tmp_path):
    """Every (language, model, measure, comparison) of their ΔLL (11 x 4 x 3 x 3: surprisal over the baseline,
    entropy added to surprisal, entropy in place of it): the words kept, the mean per word, its standard error and
    each fold's mean equal their steps run in R on their files, to 1e-9 nats."""
    out = tmp_path / "r.csv"
    res = subprocess.run(
        ["Rscript", "--vanilla", str(R_SCRIPT), str(mirror / MERGED), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    with open(out, newline="") as fh:
        want = {
            (r["lang"], MODELS[r["model"]], MEASURES[r["psychometric"]], r["comparison"]): r for r in csv.DictReader(fh)
        }
    assert len(want) == 3 * 132
    got = q(
        wh.marts,
        "SELECT corpus, model_key, measure, comparison, n_words, delta_loglik_nats_per_word, "
        "delta_loglik_se_nats_per_word, delta_loglik_ci_low_nats_per_word, fold_delta_nats_per_word "
        "FROM mart_xlang_delta_loglik WHERE run_source = 'imported_words'",
    )
    assert len(got) == 3 * 132
    worst = 0.0
    for corpus, model, measure, comparison, n, mean, se, low, folds in got:
        r = want[(UPSTREAM[corpus], model, measure, comparison)]
        assert n == int(r["n"]), (corpus, model, measure, comparison)
        theirs = [float(x) for x in r["fold_means"].split(";")]
        diffs = [abs(mean - float(r["mean"])), abs(se - float(r["se"]))] + [abs(a - b) for a, b in zip(folds, theirs)]
        assert max(diffs) < 1e-9, (corpus, model, measure, comparison, diffs)
        assert low == pytest.approx(mean - 1.96 * se, abs=1e-15)
        worst = max(worst, *diffs)
    print(f"their ΔLL replayed: 396 of 396 within {worst:.1e} nats of R")
    # the result is theirs: surprisal helps gaze duration in every language for mGPT with long context
    pos = q(
        wh.marts,
        "SELECT count(*) FROM mart_xlang_delta_loglik WHERE model_key = 'mgpt-lc' AND comparison = "
        "'surprisal' AND measure = 'gaze_duration' AND delta_loglik_ci_low_nats_per_word > 0",
    )
    assert pos == [(11,)]


def test_ours_on_their_words(wh):
    """Our scored runs on a MECO corpus get the same procedure on the same words (their frequency and length), LW
    and WT; the tiny GPT-2 scores every MECO language in the session's models file."""
    rows = q(
        wh.marts,
        "SELECT corpus, measure, definition, comparison, n_words FROM mart_xlang_delta_loglik "
        "WHERE run_source = 'scored' ORDER BY ALL",
    )
    assert {r[0] for r in rows} == set(UPSTREAM) and len(rows) == 18 * len(UPSTREAM)
    assert {r[2] for r in rows} == {"lw", "wt"} and {r[1] for r in rows} == set(MEASURES.values())
    assert {r[3] for r in rows} == {"surprisal", "entropy_added", "entropy_replaces"}


def test_a_bad_meco_row_is_a_one_line_error_naming_the_file(mirror):
    """The adapter's checks on their file's rows (a changed file is refused first by its sha256; these are the
    checks behind that): every problem is an IngestError naming the file and the line."""
    from predictabase.core.errors import IngestError
    from predictabase.ingest.datasets import meco
    from predictabase.ingest.sources import readers

    path = MERGED + "/ko.csv"
    data = (mirror / path).read_bytes()
    src = readers.Source(path=path, sha256="x", local=mirror / path, data=data)
    rows = readers.delimited(data, path, meco.MERGED)
    assert len(meco._word_table(src, rows)) == 1692  # the file as it is passes

    def bad(change: dict, k: int = 5) -> list[dict]:
        return [({**r, **change} if i == k else r) for i, r in enumerate(rows)]

    first_other = next(
        i
        for i, r in enumerate(rows)
        if r["model"] != rows[0]["model"] and (r["trialid"], r["ianum"]) == (rows[0]["trialid"], rows[0]["ianum"])
    )
    cases = [
        (bad({"ia": "two\twords"}), "line 7: word 'two\\\\twords' is empty or holds a space"),
        (bad({"gaze_rt": "-3"}), "line 7: gaze_duration -3.0 is not a mean reading time >= 0 ms"),
        (bad({"ianum": "x"}), "line 7 ianum: 'x' is not an integer"),
        (bad({"total_rt": "slow"}), "line 7 total_rt: 'slow' is not a number"),
        (
            bad({"gaze_rt": "1.5"}, first_other),
            f"line {first_other + 2}: text 1 word 1 differs between the models' rows",
        ),
    ]
    for changed, match in cases:
        with pytest.raises(IngestError, match=match) as err:
            meco._word_table(src, changed)
        assert str(err.value).startswith(path) and "\n" not in str(err.value)
    with pytest.raises(IngestError, match="truncated"):
        readers.delimited(data[:-40], path, meco.MERGED)


LINK_R_SCRIPT = Path(__file__).with_name("r") / "wilcox_link.R"
#: the columns their link analysis reads
LINK_COLUMNS = ["model", "gaze_rt", "freq", "len", "prev_freq", "prev_len", "prev2_freq", "surp", "prev_surp"]


def exact_copy(src: Path, dest: Path) -> None:
    """Their file's columns that the link analysis reads, every number as the double Python parses (correctly
    rounded) written in hex, which R reads back exactly: R's decimal parser is off by an ulp on some of their
    numbers, and a GAM's smoothing parameter moves with an ulp where GCV is flat."""

    def exact(v: str) -> str:
        if v in ("", "NA"):
            return "NA"
        x = float(v)
        return "Inf" if x == float("inf") else "-Inf" if x == float("-inf") else x.hex()

    with open(src, newline="", encoding="utf-8") as fh, open(dest, "w", newline="", encoding="utf-8") as out:
        w = csv.writer(out)
        w.writerow(LINK_COLUMNS)
        for r in csv.DictReader(fh):
            w.writerow([r["model"]] + [exact(r[c]) for c in LINK_COLUMNS[1:]])


@pytest.fixture(scope="module")
def link_wh(wh, tmp_path_factory):
    """The session's warehouse with int_link_fits' GAMs fitted for MECO Korean, UCL and Brown (var gam names them)."""
    from predictabase.core.config import paths as make_paths
    from predictabase.warehouse import dbt_build, publish

    root = tmp_path_factory.mktemp("link")
    shutil.copytree(wh.warehouse, root / "warehouse")
    p = make_paths(root / "warehouse")
    # R on one core: the other test worker may be running four browsers at once (test_live_games), and R on both
    # cores starved them past their timeouts once
    cores = os.environ.get("PREDICTABASE_R_CORES")
    os.environ["PREDICTABASE_R_CORES"] = "1"
    try:
        assert dbt_build(p, select="int_link_fits+", extra=["--vars", '{"gam": "meco_ko,ucl,brown"}']) == []
    finally:
        if cores is None:
            os.environ.pop("PREDICTABASE_R_CORES", None)
        else:
            os.environ["PREDICTABASE_R_CORES"] = cores
    publish(p)
    return p


@pytest.mark.skipif(shutil.which("Rscript") is None, reason="needs Rscript (make r-engine)")
def test_link_shape_equals_their_script_run_in_r(link_wh, mirror, tmp_path):
    """Their linear vs GAM comparison (analysis_link.Rmd) for MECO Korean's four models: the words kept (their
    outlier rule), the mean ΔLL per word of each link and its standard error equal their steps run in R with
    mgcv (tests/r/wilcox_link.R) on the same doubles, to 1e-9 nats."""
    src = tmp_path / "ko.csv"
    exact_copy(mirror / MERGED / "ko.csv", src)
    out = tmp_path / "r.csv"
    res = subprocess.run(
        ["Rscript", "--vanilla", str(LINK_R_SCRIPT), str(tmp_path), str(out), "ko"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    with open(out, newline="") as fh:
        want = {MODELS[r["model"]]: r for r in csv.DictReader(fh)}
    got = q(
        link_wh.marts,
        "SELECT model_key, status, n_words, linear_delta_loglik_nats_per_word, "
        "linear_delta_loglik_se_nats_per_word, gam_delta_loglik_nats_per_word, "
        "gam_delta_loglik_se_nats_per_word, gam_minus_linear_delta_loglik_nats_per_word "
        "FROM mart_link_shape WHERE corpus = 'meco_ko' AND run_source = 'imported_words'",
    )
    assert sorted(r[0] for r in got) == sorted(want)
    for model, status, n, lin, lin_se, gam, gam_se, gain in got:
        r = want[model]
        assert status == "ok" and n == int(r["n"]), (model, status, n, r["n"])
        diffs = [
            abs(lin - float(r["linear"])),
            abs(lin_se - float(r["linear_se"])),
            abs(gam - float(r["nonlinear"])),
            abs(gam_se - float(r["nonlinear_se"])),
        ]
        assert max(diffs) < 1e-9, (model, diffs)
        assert gain == pytest.approx(gam - lin, abs=1e-15)


def test_link_curves_and_the_published_ones(link_wh):
    """Every fitted set has its two curves on the 0-20 bit grid (0 ms at 0 bits, band around the curve) next to
    their published curves; the linear curve is a straight line; the corpora var gam did not name keep a status
    saying why and no numbers."""
    rows = q(link_wh.marts, "SELECT corpus, status, linear_delta_loglik_nats_per_word FROM mart_link_shape")
    fitted = {r[0] for r in rows if r[1] == "ok"}
    assert fitted == {"meco_ko", "ucl", "brown"}
    assert all(r[2] is None and r[1].startswith("not run") for r in rows if r[0] not in fitted)
    n = q(
        link_wh.marts,
        "SELECT curve_source, link, count(DISTINCT surprisal_bits), min(surprisal_bits), "
        "max(surprisal_bits) FROM mart_link_curves WHERE corpus = 'meco_ko' GROUP BY ALL ORDER BY ALL",
    )
    assert n == [
        ("ours", "gam", 201, 0.0, 20.0),
        ("ours", "linear", 201, 0.0, 20.0),
        ("published", "gam", 201, 0.0, 20.0),
        ("published", "linear", 201, 0.0, 20.0),
    ]
    at0 = q(
        link_wh.marts,
        "SELECT max(abs(effect_ms)), max(effect_high_ms - effect_low_ms) FROM mart_link_curves "
        "WHERE curve_source = 'ours' AND surprisal_bits = 0",
    )
    assert at0[0][0] < 1e-9 and at0[0][1] < 1e-9
    # linear: effect(s) = slope x s, so effect(20) = 2 x effect(10)
    lin = q(
        link_wh.marts,
        "SELECT run_id, surprisal_bits, effect_ms FROM mart_link_curves WHERE curve_source = 'ours' "
        "AND link = 'linear' AND surprisal_bits IN (10, 20) ORDER BY ALL",
    )
    by_run: dict[str, list[float]] = {}
    for run, _, e in lin:
        by_run.setdefault(run, []).append(e)
    assert len(by_run) >= 5 and all(e20 == pytest.approx(2 * e10, rel=1e-9) for e10, e20 in by_run.values())
    bands = q(
        link_wh.marts,
        "SELECT count(*) FROM mart_link_curves WHERE NOT (effect_low_ms <= effect_ms AND effect_ms <= effect_high_ms)",
    )
    assert bands == [(0,)]


def test_link_fits_r_input_is_every_double_in_hex_as_pandas_writes_it():
    """int_link_fits' text of a set (R's input and its fingerprint, which decides whether a kept fit is reused)
    is each double as C99 hex, NaN empty, infinities R's Inf, in pandas' CSV: the column-at-a-time writer gives
    the very text of exact_text applied to every value and to_csv."""
    import importlib.util

    import numpy as np
    import pandas as pd

    root = Path(__file__).parents[1]
    spec = importlib.util.spec_from_file_location(
        "int_link_fits", root / "dbt_project" / "models" / "intermediate" / "xlang" / "int_link_fits.py"
    )
    lf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lf)
    rng = np.random.default_rng(3)
    x = pd.DataFrame({c: rng.gamma(2.0, 3.0, 50) for c in lf.R_COLUMNS}, index=rng.permutation(50) + 7)
    x.iloc[[0, 4], 1] = np.nan
    x.iloc[2, 5], x.iloc[3, 6], x.iloc[5, :] = np.inf, -np.inf, np.nan
    x.iloc[6, 0], x.iloc[7, 0] = 0.1, -0.0
    want = x[lf.R_COLUMNS].apply(lambda col: col.map(lf.exact_text)).to_csv(index=False)
    assert lf.r_text(x) == want
    lines = want.splitlines()
    assert lines[0] == "rt,freq,len,prev_freq,prev_len,surp,prev_surp"
    assert lines[6] == ",,,,,,"
    assert lines[7].startswith("0x1.999999999999ap-4,") and lines[8].startswith("-0x0.0p+0,")
    assert lines[1].split(",")[1] == "" and lines[3].split(",")[5] == "Inf" and lines[4].split(",")[6] == "-Inf"
    assert lf.column_text(x["rt"].to_numpy()) == [lf.exact_text(v) for v in x["rt"]]


def test_our_entropy_is_the_first_tokens():
    """Our models' word entropy (xlang_design.first_token_entropy): the entropy at the word's first token, in bits;
    NULL for a word that is not aligned or whose first token was not scored; a later token of the word never
    counts (theirs would sum them)."""
    import math

    import duckdb

    from predictabase.stats.xlang_design import first_token_entropy

    con = duckdb.connect()
    con.execute(
        "CREATE TABLE w AS SELECT * FROM (VALUES ('r', 'meco_ko', '1', 0, 0, true), ('r', 'meco_ko', '1', 1, 1, "
        "true), ('r', 'meco_ko', '1', 2, 3, false), ('r', 'meco_ko', '1', 3, 4, true), ('r', 'provo', '1', 0, "
        "0, true)) t(run_id, corpus, doc_id, word_index, first_token_index, is_aligned)"
    )
    con.execute(
        "CREATE TABLE t AS SELECT * FROM (VALUES ('r', 'meco_ko', '1', 0, 2.0, true), ('r', 'meco_ko', '1', 1, "
        "1.0, true), ('r', 'meco_ko', '1', 2, 9.0, true), ('r', 'meco_ko', '1', 3, 4.0, true), ('r', "
        "'meco_ko', '1', 4, 3.0, false), ('r', 'provo', '1', 0, 5.0, true)) "
        "t(run_id, corpus, doc_id, token_index, entropy_nats, is_scored)"
    )
    out = first_token_entropy(con.table("w"), con.table("t"), ["meco_ko"]).sort_values("word_index")
    assert list(out["word_index"]) == [0, 1, 3]  # word 2 is not aligned; provo is not asked for
    got = out["entropy_bits"].tolist()
    assert got[0] == pytest.approx(2.0 / math.log(2)) and got[1] == pytest.approx(1.0 / math.log(2))
    assert math.isnan(got[2])  # its first token (4) was not scored


# ----------------------------------------------------------------------------- the Languages page, in a browser


@pytest.fixture(scope="module")
def languages_app(link_wh, tmp_path_factory):
    from tests.test_dashboard_browser import serving

    tmp = tmp_path_factory.mktemp("languages_app")
    with serving(link_wh, tmp) as url:
        yield {"url": url, "paths": link_wh, "tmp": tmp}


@pytest.fixture
def languages_page(languages_app):
    from playwright.sync_api import sync_playwright

    from tests.test_dashboard_browser import CHROMIUM_ARGS, Page

    exe = shutil.which("chromium")
    if exe is None:
        pytest.fail("Debian chromium is not installed (apt-get install -y chromium; `make test` does it)")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
        pg = Page(b, languages_app["tmp"])
        try:
            yield pg
        finally:
            pg.close()
            b.close()
        assert pg.outbound() == [], pg.outbound()


@pytest.mark.browser
@pytest.mark.timeout(300)
def test_languages_page_in_a_browser(languages_app, languages_page):
    """The Languages page on the refreshed warehouse (MECO's 11 languages; GAMs fitted for Korean, UCL and Brown):
    it opens with its finding (every number from its marts), draws the ΔLL, entropy, best-temperature, GAM-gain and
    curve charts,
    shows a text in its script (Hangul; Hebrew right to left), and every pick a reader can make runs."""
    from tests.test_dashboard_browser import PAGES, _assert_opens_with_finding, _charts

    pg, url = languages_page, languages_app["url"]
    sentence = _assert_opens_with_finding(pg, url + PAGES["languages"], "languages", languages_app["paths"].marts)
    assert "Across MECO's 11 languages" in sentence and "language–model pairs" in sentence, sentence
    # ΔLL, entropy, the best temperature (the tiny GPT-2's temperature runs), GAM minus linear, the curves' small
    # multiples; no chart of the word entropies (no `entropy` runs): a note saying how to make them
    assert _charts(pg) == 5
    main = pg.page.inner_text('[data-testid="stMain"]')
    for words in (
        "ΔLL by language and model",
        "Anticipation: does entropy help?",
        "Is the link between surprisal and reading time linear?",
        "Slowdown in reading by surprisal (ms)",
        "Temperature: which distribution fits reading best?",
        "11 of MECO's 11 languages have no Monte-Carlo word entropies yet",
    ):
        assert words in main, words
    text = pg.page.locator("div[lang]")  # the first text shown is in a script other than Latin
    assert text.count() == 1 and text.get_attribute("lang") in {"el", "he", "ko", "ru"}
    letters = [ch for ch in text.inner_text() if ch.isalpha()]
    assert sum(ch.isascii() for ch in letters) < 0.1 * len(letters), text.inner_text()[:80]
    pg.screenshot("languages")
    pg.open(url + PAGES["languages"] + "?text_language=meco_ko")
    text = pg.page.locator('div[lang="ko"]')
    assert text.count() == 1 and any("\uac00" <= ch <= "\ud7a3" for ch in text.inner_text())  # Hangul syllables
    # every branch a reader can take: the other comparison, measure and definition, a Hebrew text, each in the URL
    pg.open(
        url + PAGES["languages"] + "?measure=total_reading_time&definition=lw&entropy=entropy_replaces"
        "&text_language=meco_he&text=3"
    )
    pg.assert_no_exception()
    main = pg.page.inner_text('[data-testid="stMain"]')
    assert "total reading time" in main and "entropy in place of surprisal" in main
    he = pg.page.locator('div[lang="he"]')
    assert he.count() == 1 and he.get_attribute("dir") == "rtl"
    assert any("\u05d0" <= ch <= "\u05ea" for ch in he.inner_text())  # Hebrew letters
    assert "Text 3 of 12 of MECO Hebrew" in main
