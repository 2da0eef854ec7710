"""Bad inputs: corrupted bytes raise IngestError naming the file; a changed file stops ingest
before anything is written."""

from __future__ import annotations

import shutil

import duckdb
import pytest

from predictabase.core.config import Paths
from predictabase.core.config import paths as make_paths
from predictabase.core.errors import ChecksumError, IngestError
from predictabase.ingest.datasets import lm_game, natural_stories, provo, ucl
from predictabase.ingest.datasets.registry import ingest_corpora as ingest

TOK = natural_stories.TOK
MEASURES = ucl.MEASURES


def raw_bytes(fetched_raw: Paths, path: str) -> bytes:
    return (fetched_raw.raw / path).read_bytes()


def test_lm_game_doc_truncated_or_wrong(fetched_raw):
    data = raw_bytes(fetched_raw, "lm_game/server/docs/doc1003.json")
    assert lm_game.parse_doc(data, "d.json")[0] == "The"
    with pytest.raises(IngestError, match=r"d\.json: truncated or malformed JSON"):
        lm_game.parse_doc(data[: len(data) // 2], "d.json")


@pytest.mark.parametrize(
    "parse, data, match",
    [
        (lm_game.parse_doc, b'{"a": 1}', "non-empty JSON list"),
        (lm_game.parse_doc, b'["a", 3]', "token 1"),
        (lm_game.parse_doc, b'["caf\xe9"]', "not valid utf-8"),
        (lm_game.parse_accuracy, b'[[1, 2, " a", "b", 3, 1003], [1, 2, " a", 3, 1003]]', "row 1: expected"),
        (lm_game.parse_accuracy, b'[[1, 2, " a", "b", 0, 1003]]', "guessed_token_idx"),
        (lm_game.parse_accuracy, b'[[1, 2, " a", "b", 3, 1003], [1, 2', "truncated"),
    ],
)
def test_lm_game_files_that_are_wrong(parse, data, match):
    with pytest.raises(IngestError, match=match):
        parse(data, "f.json")


def test_natural_stories_tok(fetched_raw):
    data = raw_bytes(fetched_raw, TOK)
    assert sum(map(len, natural_stories.parse_tok(data, "t.tok").values())) == 10256
    with pytest.raises(IngestError, match=r"t\.tok: missing column\(s\) \['zone'\]"):
        natural_stories.parse_tok(data.replace(b"word\tzone\titem", b"word\tpos\titem", 1), "t.tok")
    cut = data[: data.index(b"\n", len(data) // 2) + 1] + b"foo\t12\n"  # a short last row
    with pytest.raises(IngestError, match="2 fields, expected 3"):
        natural_stories.parse_tok(cut, "t.tok")
    with pytest.raises(IngestError, match="does not end with a newline"):
        natural_stories.parse_tok(data[:-3], "t.tok")
    with pytest.raises(IngestError, match="not valid utf-8"):
        natural_stories.parse_tok(data.replace(b"If\t1\t1", b"\xcff\t1\t1", 1), "t.tok")
    with pytest.raises(IngestError, match="zones are not"):
        natural_stories.parse_tok(data.replace(b"you\t2\t1", b"you\t3\t1", 1), "t.tok")


def test_ucl_measures(fetched_raw):
    data = raw_bytes(fetched_raw, MEASURES)
    assert len(ucl.parse_measures(data, "m.csv", surprisal=True)) == 1726
    no_s = data.replace(b",s_GPT2,", b",s_gpt2_small,", 1)
    ucl.parse_measures(no_s, "m.csv")  # words do not need the surprisal columns
    with pytest.raises(IngestError, match=r"missing column\(s\) \['s_GPT2'\]"):
        ucl.parse_measures(no_s, "m.csv", surprisal=True)
    lines = data.split(b"\n")
    short = b"\n".join(lines[:10] + [lines[10].rsplit(b",", 3)[0]] + lines[11:])
    with pytest.raises(IngestError, match="line 11: .* fields, expected"):
        ucl.parse_measures(short, "m.csv")
    with pytest.raises(IngestError, match="not valid utf-8"):
        ucl.parse_measures(data.replace(b"Arthur", b"Arth\xfcr", 1), "m.csv")
    bad_s = data.replace(b",1.734722715868429,", b",abc,", 1)
    src = ucl.Source(path="m.csv", sha256="0" * 64, local=None, data=bad_s)  # type: ignore[arg-type]
    with pytest.raises(IngestError, match="s_GPT2: 'abc' is not a number"):
        ucl.build_imported(src, ucl.parse_measures(bad_s, "m.csv", surprisal=True))


def test_provo_inputs(fetched_raw):
    assert provo.parse_text(raw_bytes(fetched_raw, provo.text_path(45)), "45.txt").count("\u2019") == 1
    with pytest.raises(IngestError, match=r"45\.txt: not valid utf-8"):
        provo.parse_text(b"women\xd5s rights", "45.txt")
    cloze = raw_bytes(fetched_raw, provo.CLOZE)
    with pytest.raises(IngestError, match=r"cloze\.rda: cannot read the R data file"):
        provo.parse_cloze_bytes(cloze[: len(cloze) // 2], "cloze.rda")


@pytest.fixture
def private_raw(fetched_raw: Paths, tmp_path) -> Paths:
    """A warehouse whose raw/ links to the fetched files, except natural_stories/ which is a private copy."""
    p = make_paths(tmp_path / "w")
    p.raw.mkdir(parents=True)
    for entry in fetched_raw.raw.iterdir():
        if entry.name == "natural_stories":
            shutil.copytree(entry, p.raw / entry.name)
        else:
            (p.raw / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    return p


def table_state(p: Paths) -> list:
    con = duckdb.connect(str(p.duckdb), read_only=True)
    try:
        return [
            con.execute(f"select count(*), sum(hash(columns(*))) from {t}").fetchall()
            for t in ("raw.documents", "raw.words")
        ]
    finally:
        con.close()


def test_changed_file_stops_ingest_unchanged_warehouse(private_raw):
    p = private_raw
    assert ingest(p, ["natural_stories", "ucl"], show_progress=False) == {"natural_stories": 10266, "ucl": 2136}
    before = table_state(p)
    tok = p.raw / TOK
    tok.write_bytes(tok.read_bytes().replace(b"peaked", b"peeked", 1))  # same size, different sha256
    # ucl comes first and is fine, but nothing is written: every corpus is validated before any write
    with pytest.raises(ChecksumError, match="does not match the catalog"):
        ingest(p, ["ucl", "natural_stories"], show_progress=False)
    assert table_state(p) == before
    tok.unlink()
    with pytest.raises(IngestError, match="not fetched yet"):
        ingest(p, ["natural_stories"], show_progress=False)
    assert table_state(p) == before


def test_unknown_name(tmp_paths):
    with pytest.raises(IngestError, match="unknown corpus name"):
        ingest(tmp_paths, ["brown"], show_progress=False)
