"""Self-paced reading and word frequency on the real files: the two SPR jobs (row counts, the UCL
reader and sentence findings, the join error on a doctored row), raw.word_frequencies against wordfreq and
freqs-1.tsv, and the dbt marts (the Natural Stories filter counts and its exact reproduction of meanItemRT)."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import polars as pl
import pytest

from predictabase.core.config import paths as make_paths
from predictabase.core.errors import IngestError
from predictabase.ingest.datasets import corpora, natural_stories, ucl
from predictabase.ingest.datasets import self_paced_reading as spr
from tests.helpers import q

JOBS = [
    "natural_stories",
    "ucl",
    "natural_stories_spr_means",
    "ucl_published_measures",
    "natural_stories_spr",
    "ucl_spr",
    "word_frequencies",
]
DBT_SELECT = (
    "stg_words stg_ucl_published_word_measures stg_reading_times stg_word_frequencies "
    "stg_natural_stories_spr_means int_self_paced_reading_published_means int_self_paced_reading "
    "mart_self_paced_reading mart_self_paced_reading_word_means mart_self_paced_reading_agreement "
    "assert_self_paced_reading_reproduces_natural_stories_means"
)


@pytest.fixture(scope="module")
def warehouse(fetched_raw, tmp_path_factory):
    """The SPR and frequency jobs ingested from the mirror (twice: idempotent), the SPR dbt models built."""
    import shutil

    from predictabase.ingest.datasets.registry import run_ingest
    from predictabase.warehouse.dbt import run_dbt

    p = make_paths(tmp_path_factory.mktemp("spr") / "warehouse")
    shutil.copytree(fetched_raw.raw, p.raw)
    counts = run_ingest(p, JOBS, show_progress=False)
    notes = {n: dict(corpora.LAST_NOTES[n]) for n in ("natural_stories_spr", "ucl_spr")}
    again = run_ingest(p, ["ucl_spr", "word_frequencies"], show_progress=False)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DBT_INDIRECT_SELECTION", "cautious")
        run_dbt(p, "build", DBT_SELECT)
    return p, counts, again, notes


def rda(mirror: Path, spec) -> pl.DataFrame:
    import pyreadr

    return pl.from_pandas(pyreadr.read_r(str(mirror / spec.path))[spec.object])


# ------------------------------------------------------------------ ingest


def test_row_counts_and_readers(warehouse):
    p, counts, again, notes = warehouse
    assert counts["natural_stories_spr"] == 1_013_377
    assert counts["ucl_spr"] == 64_320 == again["ucl_spr"]  # re-run: replaced, not duplicated
    assert q(p, "select corpus, count(*), count(distinct reader_id) from raw.reading_times group by 1 order by 1") == [
        ("natural_stories", 1_013_377, 181),
        ("ucl", 64_320, 54),
    ]
    ns = notes["natural_stories_spr"]
    assert (ns["readers"], ns["reader_stories"], ns["word_mismatch_rows"], ns["duplicate_reader_word_keys"]) == (
        181,
        988,
        0,
        0,
    )
    # every row joined raw.words: word_index set, and the file's word is the corpus word
    assert q(
        p,
        """select count(*) from raw.reading_times s join raw.words w
                   on w.corpus = s.corpus and w.doc_id = s.doc_id and w.word_index = s.word_index
                   and w.native_id = s.native_id and w.word = s.word""",
    ) == [(1_013_377 + 64_320,)]


def test_ucl_readers_are_54_people_and_sentences_map_by_text(warehouse, mirror):
    p, _, _, notes = warehouse
    u = notes["ucl_spr"]
    assert u["readers_in_file"] == u["readers"] == 54  # not 117: pangoling kept native speakers with > 80 % accuracy
    assert (u["file_sentences"], u["corpus_sentences_matched"], u["file_sentences_not_in_corpus"]) == (358, 204, 154)
    assert (u["rows_in_file"], u["rows_not_in_corpus"]) == (165_040, 100_720)
    assert u["corpus_sentences_without_spr"] == ["43"] and u["word_mismatch_rows"] == 0
    df = rda(mirror, ucl.SPR_SPEC)
    person = df.group_by("subj").agg(pl.col("age", "sex", "hand", "correct_perc").n_unique())
    assert person.height == 54 and all(person[c].max() == 1 for c in ("age", "sex", "hand", "correct_perc"))
    assert df.select("subj", "sent_id", "word_n").is_duplicated().sum() == 0
    assert df["correct_perc"].min() > 0.8 and 43 not in df["sent_id"].to_list()  # the upstream cleaning
    assert q(p, "select count(*) from raw.documents where corpus = 'ucl' and doc_id = '43'") == [(1,)]
    assert q(p, "select count(*) from raw.reading_times where corpus = 'ucl' and doc_id = '43'") == [(0,)]
    # a mapped sentence: pangoling's numbering differs from de Varda's, the texts are equal
    rows = q(
        p,
        """select distinct s.upstream_sentence_id, d.text from raw.reading_times s
                   join raw.documents d on d.corpus = 'ucl' and d.doc_id = s.doc_id where s.corpus = 'ucl'""",
    )
    texts = dict(
        df.select("sent_id", "word_n", "word")
        .unique()
        .group_by("sent_id")
        .agg(pl.col("word").sort_by("word_n").str.join(" "))
        .rows()
    )
    assert len(rows) == 204 and all(texts[sid] == text for sid, text in rows)
    assert (12, "You'll demand nothing of me.") in rows


def test_a_row_that_does_not_join_raw_words_is_an_error_listing_it(fetched_raw):
    _, words = corpora.corpus_frames(fetched_raw, {}, "natural_stories")
    src, df = spr.read_frame(natural_stories.SPR_SPEC, fetched_raw)
    doctored = df.with_columns(
        pl.when(pl.int_range(pl.len()) == 7).then(5000).otherwise(pl.col("word_n")).cast(pl.Int32).alias("word_n")
    )
    with pytest.raises(
        IngestError,
        match=r"pangoling/data_natural_spr.rda: 1 row\(s\) do not join raw.words: "
        r"subj 1 item 1 word_n 5000$",
    ):
        natural_stories.build_spr(src, doctored, words)
    renamed = df.with_columns(
        pl.when(pl.int_range(pl.len()) == 0).then(pl.lit("Iff")).otherwise(pl.col("word")).alias("word")
    )
    load = natural_stories.build_spr(src, renamed, words)
    assert load.notes["word_mismatch_rows"] == 1 and load.notes["word_mismatch_examples"] == ["1:1 'Iff' vs 'If'"]
    with pytest.raises(IngestError, match="RT is not an integer in row 3"):
        natural_stories.build_spr(
            src,
            df.with_columns(pl.when(pl.int_range(pl.len()) == 2).then(300.5).otherwise(pl.col("RT")).alias("RT")),
            words,
        )


# ------------------------------------------------------------------ word frequencies


def test_word_frequencies_are_wordfreqs_values(warehouse):
    import wordfreq

    p = warehouse[0]
    # every corpus word, from the corpus loaders (lm_game and provo are not ingested in this warehouse)
    # the English corpora (MECO's 11 languages: tests/test_xlang.py)
    from predictabase.ingest.datasets import meco

    languages = "(" + ", ".join(f"'{c}'" for c in meco.corpora()) + ")"
    assert q(
        p, f"select corpus, count(*) from raw.word_frequencies where corpus not in {languages} group by 1 order by 1"
    ) == [("lm_game", 368_908), ("natural_stories", 10_256), ("provo", 2_745), ("ucl", 1_931)]
    assert q(
        p,
        """select count(*) from raw.word_frequencies f join raw.words w using (corpus, doc_id, word_index)
                   where f.word = w.word and f.native_id is not distinct from w.native_id""",
    ) == [(10_256 + 1_931,)]
    version = importlib.metadata.version("wordfreq")
    assert q(
        p,
        "select distinct wordfreq_version, wordfreq_wordlist, wordfreq_language from raw.word_frequencies "
        f"where corpus not in {languages}",
    ) == [(version, "large", "en")]
    # each MECO language in its own list: wordfreq's large one, else its small one (Greek, Korean, Turkish)
    assert q(
        p,
        "select corpus, wordfreq_language, wordfreq_wordlist from raw.word_frequencies "
        f"where corpus in {languages} group by all order by 1",
    ) == sorted(
        (k, c.language, "small" if c.language in ("el", "ko", "tr") else "large") for k, c in meco.corpora().items()
    )
    rows = q(
        p,
        """select word, lookup_form, n_lookup_tokens, wordfreq_frequency, zipf_frequency from raw.word_frequencies
                   where corpus = 'natural_stories' and doc_id = '1' and word_index in (0, 6, 9)
                   order by word_index""",
    )
    assert [r[:3] for r in rows] == [("If", "if", 1), ("the", "the", 1), ("England,", "england", 1)]
    for word, form, _, freq, zipf in rows:
        assert freq == wordfreq.word_frequency(word, "en", "large") == wordfreq.word_frequency(form, "en", "large")
        assert zipf == wordfreq.zipf_frequency(word, "en", "large")
    assert rows[2][4] == 5.12 and rows[1][4] == 7.73
    # a multi-token word: wordfreq's own 1/f = 1/f1 + 1/f2
    word, form, n, freq = q(
        p,
        """select word, lookup_form, n_lookup_tokens, wordfreq_frequency from raw.word_frequencies
                                  where corpus = 'natural_stories' and n_lookup_tokens = 2 order by doc_id, word_index
                                  limit 1""",
    )[0]
    parts = form.split(" ")
    assert freq == wordfreq.word_frequency(word, "en", "large") and len(parts) == n == 2
    combined = 1 / sum(1 / wordfreq.word_frequency(t, "en", "large") for t in parts)
    assert freq == pytest.approx(combined, rel=0.01)
    # no word characters: no lookup (NULL, not wordfreq's 0)
    assert q(
        p,
        """select count(*) from raw.word_frequencies where corpus = 'provo' and word = '—'
                   and lookup_form is null and zipf_frequency is null""",
    ) == [(1,)]


def test_google_books_counts_are_the_files(warehouse, mirror):
    p = warehouse[0]
    lines = (mirror / "natural_stories/freqs/freqs-1.tsv").read_text().splitlines()
    counts = {f[0]: (f[2], int(f[3])) for f in (line.split("\t") for line in lines)}
    got = dict(
        ((d, n), (c, t, k))
        for d, n, c, t, k in q(
            p,
            """
        select doc_id, native_id, google_books_count, google_books_token, google_books_code from raw.word_frequencies
        where corpus = 'natural_stories' and (doc_id, native_id) in (('1', '10'), ('1', '1'), ('6', '7'), ('3', '677'))""",
        )
    )
    assert got[("1", "10")] == (21_443_938, "England", "1.10.word") and counts["1.10.word"] == ("England", 21_443_938)
    assert got[("1", "1")] == (counts["1.1.word"][1], "If", "1.1.word") == (123_141_271, "If", "1.1.word")
    assert got[("3", "677")] == (counts["3.677.word"][1], "was n't", "3.677.word")
    assert got[("6", "7")] == (29_597_778, "Mr.", "6.7.whole")  # no .word code for Mr.: the .whole one
    assert q(
        p,
        """select count(google_books_count), count(*) filter (where google_books_code like '%.whole')
                   from raw.word_frequencies where corpus = 'natural_stories'""",
    ) == [(10_256, 10)]
    assert q(p, "select count(google_books_count) from raw.word_frequencies where corpus <> 'natural_stories'") == [
        (0,)
    ]


# ------------------------------------------------------------------ dbt


def test_natural_stories_filter_counts(warehouse, mirror):
    p = warehouse[0]
    df = rda(mirror, natural_stories.SPR_SPEC)
    kept = df.filter((pl.col("RT") > 100) & (pl.col("RT") < 3000) & (pl.col("correct") > 4)).height
    assert kept == 848_767
    got = dict(
        q(
            p,
            """select coalesce(exclusion_reason, 'kept'), count(*) from marts.mart_self_paced_reading
                       where corpus = 'natural_stories' group by 1""",
        )
    )
    assert got == {
        "kept": 848_767,
        "comprehension_at_most_4_of_6": 58_252,
        "rt_at_least_3000_ms": 2_021,
        "rt_at_least_3000_ms; comprehension_at_most_4_of_6": 114,
        "rt_at_most_100_ms": 72_663,
        "rt_at_most_100_ms; comprehension_at_most_4_of_6": 31_560,
    }
    assert q(
        p,
        """select count(*) filter (where not excluded), count(*) from marts.mart_self_paced_reading
                   where corpus = 'ucl'""",
    ) == [(64_216, 64_320)]


def test_word_means_reproduce_natural_stories_meanitemrt(warehouse):
    p = warehouse[0]
    agreement = {
        (c, f): (n, r, mad, ok)
        for c, f, n, r, mad, ok in q(
            p,
            """
        select corpus, filter, n_words, pearson_r, mean_abs_diff_ms, reproduces_published
        from marts.mart_self_paced_reading_agreement""",
        )
    }
    n, r, mad, ok = agreement[("natural_stories", "mart_filter")]
    assert (n, ok, mad) == (10_256, True, 0.0) and r == pytest.approx(1.0)
    assert not agreement[("natural_stories", "rt_inclusive")][3]  # 100 and 3000 ms are excluded upstream
    n, r, mad, ok = agreement[("ucl", "none")]
    assert n == 1_720 and not ok and 0.6 < r < 0.9  # 54 of the 117 readers the published means average
    assert q(
        p,
        """select count(*), count(mean_rt_ms), count(zipf_frequency), count(published_mean_rt_ms)
                   from marts.mart_self_paced_reading_word_means where corpus = 'natural_stories'""",
    ) == [(10_256, 10_256, 10_256, 10_256)]
    # the mean of one word by hand from the kept rows
    assert q(
        p,
        """select round(avg(rt_ms), 9) from marts.mart_self_paced_reading
                   where corpus = 'natural_stories' and doc_id = '1' and word_index = 9 and not excluded""",
    ) == q(
        p,
        """select round(mean_rt_ms, 9) from marts.mart_self_paced_reading_word_means
                   where corpus = 'natural_stories' and doc_id = '1' and word_index = 9""",
    )


def test_a_users_per_reader_times_take_the_shipped_lane(warehouse, tmp_path):
    """A user corpus's per-reader reading times are rows of raw.reading_times, as the shipped corpora's, and
    enter the regressions through the same query. Natural Stories' story 1 declared as a user's corpus (`corpus
    add`) with five readers' self-paced reading times taken from the shipped rows: every row enters
    int_reading_observations as given (a user corpus declares no exclusion), and int_reading_word_means is their
    mean, computed here independently."""
    import shutil
    import statistics

    from typer.testing import CliRunner

    from predictabase.cli import app
    from predictabase.ingest.datasets.registry import run_ingest
    from predictabase.warehouse.dbt import run_dbt

    p0 = warehouse[0]
    p = make_paths(tmp_path / "warehouse")
    shutil.copytree(p0.warehouse, p.warehouse)
    words = pl.DataFrame(
        q(
            p,
            "select doc_id, native_id, word from raw.words where corpus = 'natural_stories' "
            "and doc_id = '1' order by word_index",
        ),
        schema=["text_id", "word_id", "word"],
        orient="row",
    )
    readers = [
        r
        for (r,) in q(
            p,
            "select distinct reader_id from raw.reading_times where corpus = 'natural_stories' "
            "and doc_id = '1' order by reader_id limit 5",
        )
    ]
    rts = pl.DataFrame(
        q(
            p,
            "select doc_id, native_id, reader_id, rt_ms from raw.reading_times "
            "where corpus = 'natural_stories' and doc_id = '1' and rt_ms > 0 and reader_id in "
            "(?, ?, ?, ?, ?)",
            *readers,
        ),
        schema=["text_id", "word_id", "reader_id", "spr"],
        orient="row",
    )
    words.write_csv(tmp_path / "words.csv")
    rts.write_csv(tmp_path / "rt.csv")
    res = CliRunner().invoke(
        app,
        [
            "corpus",
            "add",
            "story_one",
            "--texts",
            str(tmp_path / "words.csv"),
            "--reading-times",
            str(tmp_path / "rt.csv"),
            "--measure",
            "spr",
            "--warehouse",
            str(p.warehouse),
        ],
    )
    assert res.exit_code == 0, res.output
    run_ingest(p, ["declared_corpora"], show_progress=False)
    assert q(
        p, "select table_name from information_schema.tables where table_schema = 'raw' and table_name like '%reading%'"
    ) == [("reading_times",)]
    assert q(
        p,
        "select measure, count(*), count(distinct reader_id) from raw.reading_times "
        "where corpus = 'story_one' group by 1",
    ) == [("spr", rts.height, 5)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DBT_INDIRECT_SELECTION", "cautious")
        run_dbt(p, "build", "+int_reading_word_means")
    got = q(
        p,
        "select o.doc_id, w.native_id, o.reader_id, o.rt_ms from intermediate.int_reading_observations o "
        "join raw.words w using (corpus, doc_id, word_index) where corpus = 'story_one' order by all",
    )
    assert got == sorted(rts.rows()) and len(got) > 3000
    by_word: dict = {}
    for _, word_id, _, rt in rts.rows():
        by_word.setdefault(word_id, []).append(rt)
    means = q(
        p,
        "select w.native_id, m.mean_rt_ms, m.n_observations, m.mean_source "
        "from intermediate.int_reading_word_means m join raw.words w using (corpus, doc_id, word_index) "
        "where corpus = 'story_one'",
    )
    assert len(means) == len(by_word)
    for word_id, mean, n, source in means:
        assert source == "readers" and n == len(by_word[word_id])
        assert mean == pytest.approx(statistics.fmean(by_word[word_id]), rel=1e-12)
    # the shipped story's rows are where they were (the exclusions of Oh & Schuler 2024, appendix B still apply to them)
    assert q(
        p, "select count(*) from intermediate.int_reading_observations where corpus = 'natural_stories' and rt_ms < 100"
    ) == [(0,)]
