"""Eye-tracking ingest on the real mirror: Provo and UCL fixations, UCL per-reader measures.

Counts against SOURCES.md, the zero-as-skip conversion, mac_roman strings, the word joins (and a row that
does not join), the fixation order, per-corpus replacement and idempotency.
"""

from __future__ import annotations

import pytest

from predictabase.core.config import Paths
from predictabase.core.config import paths as make_paths
from predictabase.core.errors import IngestError
from predictabase.ingest.datasets import provo, ucl
from predictabase.ingest.datasets.registry import run_ingest
from predictabase.ingest.sources import readers
from predictabase.ingest.sources.definitions import FileSpec
from tests.helpers import q

JOBS = ["provo", "ucl", "provo_eye_tracking", "ucl_fixations", "ucl_eye_tracking"]


@pytest.fixture(scope="module")
def wh(fetched_raw: Paths, tmp_path_factory) -> Paths:
    p = make_paths(tmp_path_factory.mktemp("eye_tracking") / "w")
    p.warehouse.mkdir(parents=True)
    p.raw.symlink_to(fetched_raw.raw, target_is_directory=True)
    run_ingest(p, JOBS, show_progress=False)
    return p


def test_counts_as_sources_md(wh):
    assert q(
        wh,
        """select corpus, count(*), count(distinct reader_id), count(distinct doc_id),
                           count(*) - count(word_index)
                    from raw.eye_tracking_fixations group by 1 order by 1""",
    ) == [("provo", 228_883, 84, 55, 5_827), ("ucl", 96_824, 43, 205, 2_088)]
    assert q(
        wh,
        """select count(*), count(distinct reader_id), count(distinct doc_id)
                    from raw.eye_tracking_measures_upstream""",
    ) == [(81_109, 43, 205)]
    # fixation_index numbers each reader x text 1..n
    assert q(
        wh,
        """select count(*) from (select corpus, reader_id, doc_id, min(fixation_index) lo,
                           max(fixation_index) hi, count(*) n, count(distinct fixation_index) d
                    from raw.eye_tracking_fixations group by all) where lo <> 1 or hi <> n or d <> n""",
    ) == [(0,)]
    # Provo: every reader reads the text of trial 1 again in trial 56 (two readings, told apart by trial_index)
    assert q(
        wh,
        """select count(*), min(t1), max(t2) from (select reader_id, doc_id, min(trial_index) t1,
                           max(trial_index) t2 from raw.eye_tracking_fixations where corpus = 'provo'
                    group by all having count(distinct trial_index) > 1)""",
    ) == [(84, 1, 56)]
    assert q(wh, "select count(*) from raw.eye_tracking_fixations where source_sha256 is null or duration_ms <= 0") == [
        (0,)
    ]


def test_zero_as_skip(wh):
    # reader 1, pangoling sentence 2 'Billy wrote on the envelope.': 'the' is coded 0 on all four measures
    assert q(
        wh,
        """select word, first_fixation_ms, first_pass_ms, right_bounded_ms, go_past_ms, skipped
                    from raw.eye_tracking_measures_upstream where reader_id = '1' and upstream_item = '2'
                    order by word_index""",
    ) == [
        ("Billy", 272, 272, 272, 272, False),
        ("wrote", 160, 160, 160, 160, False),
        ("on", 280, 280, 280, 280, False),
        ("the", None, None, None, None, True),
        ("envelope.", 264, 820, 820, 820, False),
    ]
    assert q(
        wh,
        """select count(*) filter (where skipped),
                           count(*) filter (where skipped <> (first_fixation_ms is null)
                                              or skipped <> (first_pass_ms is null)
                                              or skipped <> (right_bounded_ms is null)
                                              or skipped <> (go_past_ms is null)),
                           count(*) filter (where least(first_fixation_ms, first_pass_ms, right_bounded_ms,
                                                        go_past_ms) <= 0)
                    from raw.eye_tracking_measures_upstream""",
    ) == [(28_039, 0, 0)]


def test_zero_on_some_measures_only_is_refused(fetched_raw, monkeypatch):
    real = readers.rdata

    def doctored(data, name, spec):
        df = real(data, name, spec)
        if spec is ucl.READING_MEASURES_SPEC:
            df.loc[1, "RTgopast"] = 0  # reader 1, 'lost': fixated, go-past alone 0
        return df

    monkeypatch.setattr(readers, "rdata", doctored)
    with pytest.raises(IngestError, match=r"pangoling/data_frank2013_et_rt.rda: 0 ms .* row\(s\) 2 \(1 in all\)"):
        ucl.load_eye_tracking(fetched_raw)


def test_mac_roman_strings(wh):
    got = dict(
        q(
            wh,
            """select upstream_word, count(*) from raw.eye_tracking_fixations where corpus = 'provo'
                        and upstream_word in ('doesn’t', 'women’s', 'bonds’', '—') group by 1""",
        )
    )
    assert got == {"doesn’t": 228, "women’s": 213, "bonds’": 206, "—": 79}
    assert q(
        wh,
        """select count(*) from raw.eye_tracking_fixations
                    where regexp_matches(upstream_word, '[ÕÑÒÓÔ]')""",
    ) == [(0,)]


def test_pyreadr_refuses_mac_roman(fetched_raw):
    src = readers.source(provo.FIXATIONS_SPEC, fetched_raw)
    spec = FileSpec(**{**provo.FIXATIONS_SPEC.__dict__, "engine": "pyreadr"})
    with pytest.raises(IngestError, match=r"provo_vasilev/data/df.Rda: cannot read the R data file as mac_roman"):
        readers.rdata(src.data, src.path, spec)


def test_provo_words_join(wh):
    # every fixation on a word joins raw.words; the labels agree by letters except the two dash compounds
    rows = q(
        wh,
        """select f.doc_id, f.upstream_word_number, f.upstream_word, w.word, count(*)
                    from raw.eye_tracking_fixations f join raw.words w using (corpus, doc_id, word_index)
                    where f.corpus = 'provo'
                      and regexp_replace(lower(f.upstream_word), '[^0-9a-z]', '', 'g')
                          <> regexp_replace(lower(w.word), '[^0-9a-z]', '', 'g')
                    group by all order by all""",
    )
    assert rows == [("55", 9, "livres--a", "livres,", 224), ("55", 60, "profession--writing.", "profession,", 311)]
    assert q(
        wh,
        """select count(*), count(w.word), count(*) filter (where f.upstream_word = w.word)
                    from raw.eye_tracking_fixations f left join raw.words w using (corpus, doc_id, word_index)
                    where f.corpus = 'provo' and f.word_index is not null""",
    ) == [(223_056, 223_056, 221_167)]
    # text 36 shows 'earth — betting': each label joins its own word (Texts/36.txt has 'earth betting —')
    assert q(
        wh,
        """select upstream_word_number, upstream_word, word_index, native_id from raw.eye_tracking_fixations
                    where corpus = 'provo' and doc_id = '36' and upstream_word_number in (24, 25)
                    group by all order by 1""",
    ) == [(24, "—", 24, None), (25, "betting", 23, "24")]
    # no-word fixations: wordID '.', word_text NaN
    assert q(
        wh,
        """select distinct upstream_word, native_id, upstream_word_number from raw.eye_tracking_fixations
                    where corpus = 'provo' and word_index is null""",
    ) == [(".", None, None)]


def test_align_numbers():
    m, dev = provo.align_numbers({1: "a", 2: "—", 3: "betting", 4: "that"}, ["a", "betting", "—", "that"])
    assert m == {1: 0, 2: 2, 3: 1, 4: 3} and list(dev) == ["reordered"]
    m, dev = provo.align_numbers({1: "won", 2: "livres--a", 3: "large"}, ["won", "livres,", "a", "large"])
    assert m == {1: 0, 2: 1, 3: 3} and dev == {"spanning": [(2, "livres--a", ["livres,", "a"])]}
    m, _ = provo.align_numbers({1: '"snow', 2: 'angel"', 4: "x"}, ["snow", "angel", "never", "y"])  # 3: unfixated
    assert m == {1: 0, 2: 1, 4: 3}
    m, _ = provo.align_numbers({1: "a", 2: "b", 99: "c"}, ["a", "b"])
    assert 99 not in m


def test_ucl_sentences_and_words_join(wh):
    # pangoling's 1..361 numbering mapped by text: 53 of the 205 sentences carry another id there
    assert q(
        wh,
        """select count(distinct doc_id), count(distinct upstream_item),
                           count(distinct doc_id) filter (where doc_id <> upstream_item)
                    from raw.eye_tracking_fixations where corpus = 'ucl'""",
    ) == [(205, 205, 53)]
    for table in ["eye_tracking_fixations", "eye_tracking_measures_upstream"]:
        word = "upstream_word" if table == "eye_tracking_fixations" else "word"
        assert q(
            wh,
            f"""select count(*) filter (where x.word_index is not null and w.word is distinct from x.{word}),
                                count(*) filter (where x.native_id <> (x.word_index + 1)::varchar)
                         from raw.{table} x left join raw.words w using (corpus, doc_id, word_index)
                         where x.corpus = 'ucl'""",
        ) == [(0, 0)]
    assert q(
        wh,
        """select distinct upstream_word, blink is null from raw.eye_tracking_fixations
                    where corpus = 'ucl' and word_index is null order by 2""",
    ) == [("-", False), ("-", True)]


def test_ucl_fixation_order_is_temporal(wh):
    """The file's row order within (subj, sent_id) is the reading order: the first fixation on a word in that
    order is the published first-fixation duration for every word fixated in first pass (53,070 of 53,070;
    61% in the reversed order)."""
    first = """select m.first_fixation_ms = f.duration_ms from raw.eye_tracking_measures_upstream m join (
                   select reader_id, doc_id, word_index, duration_ms, row_number() over (
                       partition by reader_id, doc_id, word_index order by fixation_index {}) k
                   from raw.eye_tracking_fixations where corpus = 'ucl' and word_index is not null) f
               using (reader_id, doc_id, word_index) where f.k = 1 and not m.skipped"""
    assert q(wh, f"select count(*), count(*) filter (where a) from ({first.format('')}) t(a)") == [(53_070, 53_070)]
    assert q(wh, f"select count(*) filter (where a) from ({first.format('desc')}) t(a)") == [(32_471,)]


def test_row_that_does_not_join_is_an_error(fetched_raw, monkeypatch):
    real = readers.rdata

    def doctored(data, name, spec):
        df = real(data, name, spec)
        if spec is provo.FIXATIONS_SPEC:
            df.loc[df.index[(df["item"] == 1) & (df["word_text"] == 5)][0], "word_text"] = 999.0
        if spec is ucl.FIXATIONS_SPEC:
            df.loc[0, "word_n"] = 9.0  # reader 1's first fixation, 'Anne' of a 5-word sentence
        return df

    monkeypatch.setattr(readers, "rdata", doctored)
    with pytest.raises(
        IngestError,
        match=r"^provo_vasilev/data/df.Rda: reading rows do not join raw.words "
        r"\(provo\): text 1 word 999 \(1 in all\)",
    ):
        provo.load_eye_tracking(fetched_raw)
    with pytest.raises(
        IngestError,
        match=r"^pangoling/data_frank2013_et_fix.rda: reading rows do not join "
        r"raw.words \(ucl\): sent_id 1 word 9 \(1 in all\)",
    ):
        ucl.load_fixations(fetched_raw)


def test_ucl_word_not_in_the_sentence_is_an_error(fetched_raw, monkeypatch):
    real = readers.rdata

    def doctored(data, name, spec):
        df = real(data, name, spec)
        if spec is ucl.READING_MEASURES_SPEC:
            df.loc[df["sent_id"] == 1, "word"] = df.loc[df["sent_id"] == 1, "word"].str.upper()
        return df

    monkeypatch.setattr(readers, "rdata", doctored)
    with pytest.raises(
        IngestError,
        match=r"data_frank2013_et_rt.rda: sentence\(s\) not among the ucl documents "
        r"by text \(sent_id\): 1 \(1 in all\)",
    ):
        ucl.load_eye_tracking(fetched_raw)


def test_idempotent_and_per_corpus(wh, tmp_path):
    """Ingesting again into the same warehouse leaves the same rows; provo_eye_tracking writes before
    ucl_fixations, so a write replacing more than its corpus's partition would lose Provo's rows."""
    import shutil

    snapshot = """select corpus, count(*), sum(hash(reader_id, doc_id, fixation_index, word_index, native_id,
                         duration_ms, blink, x_px, y_px, upstream_word, trial_index))
                  from raw.eye_tracking_fixations group by 1 order by 1"""
    measures = "select count(*), sum(hash(columns(*))) from raw.eye_tracking_measures_upstream"
    before = q(wh, snapshot), q(wh, measures)
    p = make_paths(tmp_path / "w2")
    p.warehouse.mkdir(parents=True)
    p.raw.symlink_to(wh.raw.resolve(), target_is_directory=True)
    shutil.copy(wh.duckdb, p.duckdb)  # everything ingested once already
    run_ingest(p, ["provo_eye_tracking", "ucl_fixations", "ucl_eye_tracking"], show_progress=False)
    assert (q(p, snapshot), q(p, measures)) == before
