"""Eye-tracking reading measures through the real dbt SQL (int_eye_tracking_measures and
the reading marts).

1. Hand-written fixation sequences in a fresh warehouse, dbt run on them: a refixation, a skip, a word fixated
   only in a later pass, a regression out and back, fixations on no word (before reading, inside a first pass,
   after the last word), never-fixated words; every expected value worked out by hand below.
2. Real data (UCL and Provo from the mirror through the real ingest jobs): row counts, the derived measures
   against the upstream per-reader file (data_frank2013_et_rt) and against de Varda's published means
   (all_measures.csv), which turn out to be means with skips counted as 0 ms.
"""

from __future__ import annotations

import math
import shutil

import polars as pl
import pytest

from predictabase.core.config import paths as make_paths
from predictabase.ingest.raw import connect, replace_partition
from tests.helpers import fetch_all

MY_MODELS = (
    "stg_words stg_eye_tracking_fixations stg_eye_tracking_measures_upstream stg_ucl_published_word_measures "
    "int_eye_tracking_measures mart_eye_tracking_measures mart_eye_tracking_word_means "
    "mart_reading_measures_agreement assert_eye_tracking_no_zero_durations"
)

COLUMNS = [
    "first_fixation_ms",
    "gaze_duration_ms",
    "right_bounded_ms",
    "go_past_ms",
    "total_reading_time_ms",
    "n_fixations",
    "first_pass_fixations",
    "skipped_first_pass",
    "regression_out",
]

# ------------------------------------------------------------------ 1. hand-written fixation sequences

WORDS = ["The", "old", "man", "the", "boats", "today."]  # doc d1, word_index 0..5
# (word_index or None = on no word, duration_ms); fixation_index = position + 1
R1 = [
    (0, 200),
    (0, 150),  # The: refixation in first pass
    (2, 180),  # man, old skipped (a word to its right is fixated first)
    (None, 90),  # a fixation on no word ends man's first pass...
    (2, 100),  # ...back on man before going right: right-bounded, not gaze
    (3, 220),  # the
    (1, 170),  # regression out of `the` to `old`: old fixated only in a later pass
    (3, 130),  # back to `the`
    (4, 240),
    (5, 210),
]  # boats, today.: trial ends
R2 = [
    (None, 80),  # on no word before any word: belongs to no word
    (1, 300),  # old: The skipped
    (0, 120),  # regression out of old to The (The: later pass only)
    (1, 110),  # back to old
    (3, 250),  # the; man never fixated
    (5, 190),  # today.; boats never fixated
    (None, 60),
]  # off the text after the last word: in today.'s go-past only
N = None
EXPECTED = {  # (reader, word_index): first fixation, gaze, right-bounded, go-past, total, n, first-pass n, skipped, regression out
    ("r1", 0): (200, 350, 350, 350, 350, 2, 2, False, False),
    ("r1", 1): (N, N, N, N, 170, 1, N, True, N),
    ("r1", 2): (180, 180, 180 + 100, 180 + 90 + 100, 280, 2, 1, False, False),
    ("r1", 3): (220, 220, 220 + 130, 220 + 170 + 130, 350, 2, 1, False, True),
    ("r1", 4): (240, 240, 240, 240, 240, 1, 1, False, False),
    ("r1", 5): (210, 210, 210, 210, 210, 1, 1, False, False),
    ("r2", 0): (N, N, N, N, 120, 1, N, True, N),
    ("r2", 1): (300, 300, 300 + 110, 300 + 120 + 110, 410, 2, 1, False, True),
    ("r2", 2): (N, N, N, N, N, 0, N, True, N),
    ("r2", 3): (250, 250, 250, 250, 250, 1, 1, False, False),
    ("r2", 4): (N, N, N, N, N, 0, N, True, N),
    ("r2", 5): (190, 190, 190, 190 + 60, 190, 1, 1, False, False),
}


def _words_frame(corpus: str, docs: dict[str, list[str]]) -> pl.DataFrame:
    rows = []
    for doc_id, ws in docs.items():
        pos = 0
        for i, w in enumerate(ws):
            rows.append(
                dict(
                    corpus=corpus,
                    doc_id=doc_id,
                    word_index=i,
                    word=w,
                    char_start=pos,
                    char_end=pos + len(w),
                    native_id=str(i + 1),
                    source_path="fixture",
                    source_sha256="0" * 64,
                )
            )
            pos += len(w) + 1
    return pl.DataFrame(rows, schema_overrides={"word_index": pl.Int32, "char_start": pl.Int32, "char_end": pl.Int32})


def _fixations_frame(corpus: str, sequences: dict[tuple[str, str], list]) -> pl.DataFrame:
    rows = []
    for (reader, doc_id), seq in sequences.items():
        for k, (wi, dur) in enumerate(seq, start=1):
            rows.append(
                dict(
                    corpus=corpus,
                    reader_id=reader,
                    doc_id=doc_id,
                    fixation_index=k,
                    word_index=wi,
                    native_id=None if wi is None else str(wi + 1),
                    duration_ms=dur,
                    blink="after" if (reader, k) == ("r1", 2) else None,
                    x_px=None,
                    y_px=None,
                    upstream_word=None if wi is None else WORDS[wi],
                    source_path="fixture",
                    source_sha256="0" * 64,
                )
            )
    schema = {
        "corpus": pl.String,
        "reader_id": pl.String,
        "doc_id": pl.String,
        "fixation_index": pl.Int32,
        "word_index": pl.Int32,
        "native_id": pl.String,
        "duration_ms": pl.Int32,
        "blink": pl.String,
        "x_px": pl.Float64,
        "y_px": pl.Float64,
        "upstream_word": pl.String,
        "source_path": pl.String,
        "source_sha256": pl.String,
    }
    return pl.DataFrame(rows, schema=schema)


@pytest.fixture(scope="module")
def hand_built(tmp_path_factory):
    from predictabase.warehouse import dbt_build

    p = make_paths(tmp_path_factory.mktemp("reading_hand") / "warehouse")
    p.token_scores.mkdir(parents=True, exist_ok=True)
    with connect(p) as con:
        # d2 is a text nobody read: no rows for it
        replace_partition(
            con,
            "raw.words",
            _words_frame("fixture", {"d1": WORDS, "d2": ["Nobody", "read", "this."]}),
            {"corpus": "fixture"},
        )
        replace_partition(
            con,
            "raw.eye_tracking_fixations",
            _fixations_frame("fixture", {("r1", "d1"): R1, ("r2", "d1"): R2}),
            {"corpus": "fixture"},
        )
    dbt_build(
        p,
        select="stg_words stg_eye_tracking_fixations int_eye_tracking_measures mart_eye_tracking_measures "
        "mart_eye_tracking_word_means assert_eye_tracking_no_zero_durations",
    )
    return p


def test_measures_from_hand_written_fixations(hand_built):
    rows = fetch_all(
        hand_built.duckdb,
        f"select reader_id, doc_id, word_index, {', '.join(COLUMNS)} "
        "from intermediate.int_eye_tracking_measures order by all",
    )
    got = {(r[0], r[2]): r[3:] for r in rows}
    assert {r[1] for r in rows} == {"d1"}  # only the text that was read, every word of it
    assert set(got) == set(EXPECTED)
    for key, want in EXPECTED.items():
        assert got[key] == want, f"{key}: {dict(zip(COLUMNS, got[key]))} != {dict(zip(COLUMNS, want))}"


def test_hand_written_mart_rows_and_word_means(hand_built):
    blink, word, src = fetch_all(
        hand_built.duckdb,
        "select first_pass_blink, word, source_path from "
        "marts.mart_eye_tracking_measures where reader_id = 'r1' and word_index = 0",
    )[0]
    assert (blink, word, src) == (True, "The", "fixture")  # the blink-marked refixation is in The's first pass
    means = {
        r[0]: r[1:]
        for r in fetch_all(
            hand_built.duckdb,
            "select word_index, n_readers, n_readers_first_pass, skip_rate, mean_first_fixation_ms, "
            "mean_total_reading_time_ms, mean_n_fixations from marts.mart_eye_tracking_word_means",
        )
    }
    # NULLs ignored: `The` has one first-pass reader (200 ms), not (200 + 0) / 2
    assert means[0] == (2, 1, 0.5, 200.0, (350 + 120) / 2, 1.5)
    assert means[2] == (2, 1, 0.5, 180.0, 280.0, 1.0)  # man: r2 never fixated it (total NULL, 0 fixations)
    assert means[4] == (2, 1, 0.5, 240.0, 240.0, 0.5)
    assert means[5] == (2, 2, 0.0, 200.0, 200.0, 1.0)


# ------------------------------------------------------------------ 2. real data


@pytest.fixture(scope="module")
def real(fetched_raw, mirror, tmp_path_factory):
    """UCL and Provo ingested from the mirror (corpora, fixations, upstream per-reader measures, published
    means), then the eye-tracking models built."""
    from predictabase.ingest.datasets.registry import run_ingest
    from predictabase.ingest.sources.fetch import fetch_and_record
    from predictabase.warehouse import dbt_build

    p = make_paths(tmp_path_factory.mktemp("reading_real") / "warehouse")
    shutil.copytree(fetched_raw.raw, p.raw)
    fetch_and_record(p, mirror, show_progress=False)
    p.token_scores.mkdir(parents=True, exist_ok=True)
    run_ingest(
        p,
        ["ucl", "provo", "ucl_fixations", "ucl_eye_tracking", "provo_eye_tracking", "ucl_published_measures"],
        show_progress=False,
    )
    dbt_build(p, select=MY_MODELS)
    return p


def test_ucl_published_measures_ingest(real):
    rows = fetch_all(
        real.duckdb,
        "select count(*), count(distinct doc_id), min(word_index), "
        "count(*) filter (where source_path = 'ucl_devarda/all_measures.csv') "
        "from raw.ucl_published_word_measures",
    )
    assert rows == [(1726, 205, 1, 1726)]
    # the first row of all_measures.csv: 'the' in 'Arthur placed the bars of chocolate on the counter.'
    the = fetch_all(
        real.duckdb,
        "select word, native_id, rt_first_fixation_ms, rt_go_past_ms, "
        "self_paced_reading_time_ms from raw.ucl_published_word_measures "
        "where doc_id = '96' and word_index = 2",
    )
    assert the[0][:2] == ("the", "3")
    assert the[0][2:] == pytest.approx((71.14285714285714, 102.95238095238096, 296.1666666666667))


def test_real_row_counts(real):
    rows = fetch_all(
        real.duckdb,
        "select corpus, count(*), count(distinct reader_id), count(distinct doc_id), "
        "sum(n_fixations) from marts.mart_eye_tracking_measures group by 1 order by 1",
    )
    fixations_on_words = dict(
        fetch_all(real.duckdb, "select corpus, count(word_index) from raw.eye_tracking_fixations group by 1")
    )
    # a text read twice (Provo: each reader's first text returns as trial 56) counts its first reading only
    first_reading = dict(
        fetch_all(
            real.duckdb,
            """
        select corpus, count(word_index) from (
            select *, min(trial_index) over (partition by corpus, reader_id, doc_id) as first_trial
            from raw.eye_tracking_fixations)
        where trial_index is null or trial_index = first_trial group by 1""",
        )
    )
    # Provo: 84 readers x 2,745 words of 55 texts; UCL: 43 readers, 81,109 reader-words as data_frank2013_et_rt
    assert rows == [
        ("provo", 84 * 2745, 84, 55, first_reading["provo"]),
        ("ucl", 81109, 43, 205, fixations_on_words["ucl"]),
    ]
    assert fixations_on_words == {"provo": 228883 - 5827, "ucl": 96824 - 2088}
    assert first_reading["ucl"] == fixations_on_words["ucl"]
    assert 0 < fixations_on_words["provo"] - first_reading["provo"] < 84 * 100  # 84 second readings


def agreement(p) -> dict[tuple[str, str], dict]:
    cols = [
        "n_compared",
        "n_both_present",
        "n_one_side_null",
        "n_equal",
        "share_equal",
        "mean_abs_diff_ms",
        "max_abs_diff_ms",
        "pearson_r",
        "n_reference_unmatched",
    ]
    rows = fetch_all(
        p.duckdb,
        f"select comparison, measure, {', '.join(cols)} from "
        "marts.mart_reading_measures_agreement where corpus = 'ucl'",
    )
    return {(r[0], r[1]): dict(zip(cols, r[2:])) for r in rows}


def test_ucl_derived_measures_equal_the_upstream_per_reader_measures(real):
    """Measured: every one of the 81,109 UCL reader-words equal for all five measures (first fixation, gaze
    duration, right-bounded, go-past, skip) - the definitions and the treatment of fixations on no word and
    of blinks are the upstream's."""
    a = agreement(real)
    for measure in ("first_fixation", "first_pass", "right_bounded", "go_past", "skipped"):
        row = a[("derived_vs_upstream_per_reader", measure)]
        assert row["n_compared"] == 81109 and row["n_reference_unmatched"] == 0, measure
        assert row["n_equal"] == 81109 and row["share_equal"] == 1.0, (measure, row)
        assert row["n_one_side_null"] == 0
        assert row["pearson_r"] == pytest.approx(1.0, abs=1e-12)
    assert a[("derived_vs_upstream_per_reader", "first_fixation")]["n_both_present"] == 53070  # 28,039 skips


def test_published_ucl_means_count_skips_as_zero(real):
    """de Varda's RTfirstfix/RTfirstpass/RTrightbound/RTgopast are means over readers with a skipped reader
    counted as 0 ms: the zero-filled means reproduce all 1,726 words to 1e-6 ms; the NULL-ignoring means
    (mart_eye_tracking_word_means) are 66-103 ms higher on average."""
    a = agreement(real)
    for measure in ("first_fixation", "first_pass", "right_bounded", "go_past"):
        zero = a[("mean_zero_filled_vs_published", measure)]
        assert zero["n_compared"] == 1726 and zero["n_reference_unmatched"] == 0
        assert zero["n_equal"] == 1726 and zero["max_abs_diff_ms"] < 1e-6, (measure, zero)
        null = a[("mean_null_ignoring_vs_published", measure)]
        assert null["share_equal"] < 0.01 and null["mean_abs_diff_ms"] > 60, (measure, null)  # 14 words: no skips
    assert a[("mean_null_ignoring_vs_published", "first_fixation")]["pearson_r"] == pytest.approx(0.546, abs=1e-3)
    # an example: 'the' in sentence 96, 71 ms published
    ((mean, n_first_pass, n_readers),) = fetch_all(
        real.duckdb,
        "select mean_first_fixation_ms, n_readers_first_pass, n_readers from "
        "marts.mart_eye_tracking_word_means where corpus = 'ucl' and doc_id = '96' and word_index = 2",
    )
    assert (n_first_pass, n_readers) == (16, 42)
    assert mean == pytest.approx(186.75) and math.isclose(mean * n_first_pass / n_readers, 71.14285714285714)
