"""Corpus ingest on the real mirror: counts, spans, tokens, prefixes, numbering, idempotency."""

from __future__ import annotations

import json
import re

import polars as pl
import pytest

from predictabase.core.config import Paths
from predictabase.core.config import paths as make_paths
from predictabase.ingest.datasets import meco
from predictabase.ingest.datasets._common import write_corpus
from predictabase.ingest.datasets.corpora import LAST_NOTES
from predictabase.ingest.datasets.registry import CORPUS_NAMES, prepare_all
from predictabase.ingest.datasets.registry import ingest_corpora as ingest
from predictabase.ingest.raw import connect
from predictabase.ingest.sources.catalog import by_path
from tests.helpers import q


@pytest.fixture(scope="module")
def wh(fetched_raw: Paths, tmp_path_factory) -> Paths:
    """A fresh warehouse whose raw/ is the session's fetched files, ingested once."""
    p = make_paths(tmp_path_factory.mktemp("corpora") / "w")
    p.warehouse.mkdir(parents=True)
    p.raw.symlink_to(fetched_raw.raw, target_is_directory=True)
    # what ingest() does first: parse + validate everything (MECO's languages: tests/test_xlang.py)
    loads = prepare_all(p, [n for n in CORPUS_NAMES if n not in meco.corpora()], show_progress=False)
    assert set(loads) == {"lm_game", "natural_stories", "provo", "ucl", "ucl_imported_surprisal"}
    with connect(p) as con:
        for ld in loads.values():
            write_corpus(con, ld)
    LOADS.update(loads)
    return p


LOADS: dict = {}


def test_real_counts(wh):
    docs = dict(q(wh, "select corpus, count(*) from raw.documents group by 1"))
    assert docs == {"lm_game": 469, "natural_stories": 10, "provo": 55, "ucl": 205}
    words = dict(q(wh, "select corpus, count(*) from raw.words group by 1"))
    assert words == {"lm_game": 368908, "natural_stories": 10256, "provo": 2745, "ucl": 1931}
    assert q(wh, "select count(*), count(distinct doc_id) from raw.game_doc_tokens") == [(500864, 469)]
    assert q(wh, "select model, count(*) from raw.imported_word_surprisal group by 1 order by 1") == [
        (m, 1726)
        for m in sorted(
            ["gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "gpt-neo-125m", "gpt-neo-1.3b", "gpt-neo-2.7b"]
        )
    ]
    # ids as the contract fixes them
    assert q(wh, "select min(doc_id::int), max(doc_id::int) from raw.documents where corpus='ucl'") == [(1, 205)]
    assert q(wh, "select list(doc_id order by doc_index) from raw.documents where corpus='provo'")[0][0] == [
        str(i) for i in range(1, 56)
    ]
    assert q(wh, "select list(doc_id order by doc_index) from raw.documents where corpus='natural_stories'")[0][0] == [
        str(i) for i in range(1, 11)
    ]


def test_word_spans_and_indices(wh):
    docs = {(c, d): t for c, d, t in q(wh, "select corpus, doc_id, text from raw.documents")}
    rows = q(
        wh,
        "select corpus, doc_id, word_index, word, char_start, char_end from raw.words "
        "order by corpus, doc_id, word_index",
    )
    last = {}
    for c, d, wi, w, a, b in rows:
        assert docs[(c, d)][a:b] == w, (c, d, wi)
        assert wi == last.get((c, d), -1) + 1
        last[(c, d)] = wi
    # documents: n_chars / n_bytes consistent, no whitespace inside words
    assert q(
        wh, "select count(*) from raw.documents where n_chars != length(text) or n_bytes != octet_length(encode(text))"
    ) == [(0,)]
    assert q(wh, "select count(*) from raw.words where regexp_matches(word, '\\s')") == [(0,)]


def test_lm_game_tokens_and_words(wh):
    assert q(
        wh,
        """select count(*) from raw.documents d join (
        select doc_id, string_agg(token, '' order by token_index) as t, max(char_end) as e, count(*) as n,
               max(token_index) as mx from raw.game_doc_tokens group by 1) g using (doc_id)
        where d.corpus = 'lm_game' and g.t = d.text and g.e = d.n_chars and g.mx = g.n - 1""",
    ) == [(469,)]
    # spans tile the text
    assert q(
        wh,
        """select count(*) from (select char_start, lag(char_end, 1, 0) over (partition by doc_id
        order by token_index) as prev from raw.game_doc_tokens) where char_start != prev""",
    ) == [(0,)]
    # U+FFFD pieces kept
    assert q(wh, "select count(*) > 0 from raw.game_doc_tokens where token = '\ufffd'") == [(True,)]
    # words are maximal non-whitespace runs: independent re-split of every text
    texts = q(wh, "select doc_id, text from raw.documents where corpus='lm_game'")
    assert sum(len(t.split()) for _, t in texts) == 368908


def test_lm_game_prefix(wh, fetched_raw):
    """~26k GPT-2 tokens; recomputed independently from the raw JSON files."""
    rows = json.loads((fetched_raw.raw / "lm_game/analysis/results_raw/res_accuracy_anonym.json").read_text())
    lens: dict[int, int] = {}
    mx: dict[int, int] = {}
    past = 0
    for _id, _user, _guess, _ans, idx, doc in rows:
        if doc not in lens:
            lens[doc] = len(json.loads((fetched_raw.raw / f"lm_game/server/docs/doc{doc}.json").read_text()))
        past += idx > lens[doc]
        mx[doc] = max(mx.get(doc, 0), min(idx, lens[doc]))
    assert len(mx) == 469 and past == 8
    assert sum(mx.values()) == 25979
    # the warehouse: tokens inside the prefix, and the prefix ends exactly on a token boundary
    got = q(
        wh,
        """select count(*), count(distinct d.doc_id) from raw.game_doc_tokens t
                   join raw.documents d on d.corpus='lm_game' and d.doc_id = t.doc_id
                   where t.char_end <= d.score_prefix_chars""",
    )
    assert got == [(25979, 469)]
    assert q(
        wh,
        """select count(*) from raw.documents d where corpus='lm_game' and not exists (
        select 1 from raw.game_doc_tokens t where t.doc_id = d.doc_id and t.char_end = d.score_prefix_chars)""",
    ) == [(0,)]
    assert q(wh, "select count(*) from raw.documents where corpus != 'lm_game' and score_prefix_chars is not null") == [
        (0,)
    ]


def test_natural_stories_text_matches_gpt3_file(wh, fetched_raw):
    g = pl.read_csv(fetched_raw.raw / "natural_stories/probs/all_stories_gpt3.csv", infer_schema=False)
    texts = dict(q(wh, "select doc_id, text from raw.documents where corpus='natural_stories'"))
    diffs = {}
    for story, grp in g.group_by("story", maintain_order=True):
        toks, offs = grp["token"].to_list(), [int(o) for o in grp["offset"]]
        rebuilt = "".join(toks)
        assert offs == [sum(map(len, toks[:i])) for i in range(len(toks))][: len(offs)]
        mine = texts[str(int(story[0]) + 1)]
        assert len(mine) == len(rebuilt)
        diffs[str(int(story[0]) + 1)] = [(i, mine[i], rebuilt[i]) for i in range(len(mine)) if mine[i] != rebuilt[i]]
    assert {k: v for k, v in diffs.items() if v} == {"2": [(3985, "a", "e")]}  # 'peaked' vs GPT-3 'peeked'
    assert q(
        wh,
        "select native_id, word from raw.words where corpus='natural_stories' and doc_id='2' "
        "and char_start <= 3985 and char_end > 3985",
    ) == [("749", "peaked")]


def test_provo_text_and_numbering(wh):
    t27 = q(wh, "select text from raw.documents where corpus='provo' and doc_id='27'")[0][0]
    assert "doesn\u2019t" in t27 and "\u00d5" not in t27
    assert q(wh, "select count(*) from raw.documents where corpus='provo' and regexp_matches(text, '[ÕÑ\\n]|  ')") == [
        (0,)
    ]
    notes = LOADS["provo"].notes["numbering"]
    assert set(notes) == {2, 3, 13, 18, 36, 55}
    assert {t: n["tokens_vs_cloze_max_word_n"] for t, n in notes.items() if t != 2} == {
        3: (58, 59),
        13: (53, 54),
        18: (51, 50),
        36: (40, 39),
        55: (62, 60),
    }
    # native ids unique per text; the one unnumbered word is text 36's dash
    assert q(
        wh,
        "select count(*) from (select doc_id, native_id from raw.words where corpus='provo' "
        "and native_id is not null group by all having count(*) > 1)",
    ) == [(0,)]
    assert q(wh, "select doc_id, word from raw.words where corpus='provo' and native_id is null") == [("36", "\u2014")]
    assert q(wh, "select native_id from raw.words where corpus='provo' and doc_id='3' and word='While'") == [("46",)]


def test_ucl_words_join_all_measures(wh, fetched_raw):
    m = pl.read_csv(fetched_raw.raw / "ucl_devarda/all_measures.csv", infer_schema=False)
    assert m.height == 1726
    w = pl.DataFrame(
        q(wh, "select doc_id, native_id, word, word_index from raw.words where corpus='ucl'"),
        schema=["doc_id", "native_id", "word", "word_index"],
        orient="row",
    )
    j = m.select(
        doc_id=pl.col("sent_id"), native_id=(pl.col("context_length").cast(int) + 1).cast(str), mword=pl.col("word")
    ).join(w, on=["doc_id", "native_id"], how="left")
    assert j.filter(pl.col("word") != pl.col("mword")).height == 0 and j["word"].null_count() == 0
    # the 205 words without a measure row are exactly the first words
    first = w.join(j.select("doc_id", "native_id"), on=["doc_id", "native_id"], how="anti")
    assert first.height == 205 and set(first["native_id"]) == {"1"}


def test_imported_surprisal(wh):
    cols = [
        r[0]
        for r in q(
            wh,
            "select column_name from information_schema.columns "
            "where table_schema='raw' and table_name='imported_word_surprisal'",
        )
    ]
    assert "surprisal_nats" in cols and "surprisal_bits" not in cols
    assert q(
        wh,
        """select count(*) from raw.imported_word_surprisal s left join raw.words w
        on w.corpus = s.corpus and w.doc_id = s.doc_id and w.word_index = s.word_index
        where w.word is null""",
    ) == [(0,)]
    # first row of all_measures: 'the' in 'Arthur placed the ...', gpt2 = 1.7347... nats
    ((s,),) = q(
        wh,
        "select surprisal_nats from raw.imported_word_surprisal s join raw.words w using (corpus, doc_id, "
        "word_index) where model='gpt2' and w.doc_id='96' and w.word_index=2",
    )
    assert s == pytest.approx(1.734722715868429)


def test_provenance(wh):
    for table in ("raw.documents", "raw.words", "raw.game_doc_tokens", "raw.imported_word_surprisal"):
        for path, sha in q(wh, f"select distinct source_path, source_sha256 from {table}"):
            assert by_path(path).sha256 == sha
    versions = q(wh, "select corpus, count(distinct corpus_version), min(corpus_version) from raw.documents group by 1")
    assert all(n == 1 and re.fullmatch(r"[0-9a-f]{64}", v) for _, n, v in versions)
    assert len({v for _, _, v in versions}) == 4


def test_idempotent(wh):
    def snapshot():
        return {
            t: q(wh, f"select count(*), count(distinct columns(*)) from {t}")
            for t in ("raw.documents", "raw.words", "raw.game_doc_tokens", "raw.imported_word_surprisal")
        }

    before = snapshot()
    with connect(wh) as con:  # rewrite the parsed lm_game frames: replace, never append
        assert write_corpus(con, LOADS["lm_game"]) == 870241
    counts = ingest(wh, ["natural_stories", "provo", "ucl", "ucl_imported_surprisal"], show_progress=False)
    assert counts == {"natural_stories": 10266, "provo": 2800, "ucl": 2136, "ucl_imported_surprisal": 12082}
    assert snapshot() == before
    assert LAST_NOTES["natural_stories"] == {"documents": 10, "words": 10256}
    assert q(
        wh, "select count(*) from (select corpus, doc_id, word_index from raw.words group by all having count(*) > 1)"
    ) == [(0,)]
    assert q(
        wh, "select count(*) from (select corpus, doc_id from raw.documents group by all having count(*) > 1)"
    ) == [(0,)]
