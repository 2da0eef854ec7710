"""`predictabase corpus add` on bad input: each refused in one line naming the file (and the line), exit code 2,
nothing written (no declaration, no copied file, the warehouse database and the published snapshot byte for byte
as they were). And the good paths of the parsers: both texts layouts, a folder of .txt files, per-reader and
per-word reading times, seconds, skipped words, cloze counts and probabilities, another declared encoding."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from predictabase.cli import app
from predictabase.core.config import paths as make_paths
from predictabase.core.errors import IngestError
from predictabase.ingest.corpus_declarations import load_declarations
from predictabase.ingest.datasets import user_corpus
from tests.user_corpus_helpers import brown_frames


@pytest.fixture(scope="module")
def files(mirror, tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("user_files")
    df = brown_frames(mirror).filter(pl.col("text_id").is_in(["1", "2"]))
    df.select("text_id", "word_id", "word").write_csv(d / "words.csv")
    df.select("text_id", "word_id", pl.col("time").alias("rt_ms")).write_csv(d / "rt.csv")
    return {"words": d / "words.csv", "rt": d / "rt.csv", "dir": d}


@pytest.fixture
def warehouse(tmp_path) -> Path:
    """A warehouse holding a database and a published snapshot (their bytes must not change)."""
    import duckdb

    w = tmp_path / "warehouse"
    w.mkdir()
    for name in ("predictabase.duckdb", "marts.duckdb"):
        with duckdb.connect(str(w / name)) as con:
            con.execute("CREATE TABLE t AS SELECT 1 AS x")
    return w


def state(w: Path) -> dict[str, str]:
    return {
        str(p.relative_to(w)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(w.rglob("*"))
        if p.is_file() and p.name != ".writer.lock" and p.name != "runs.jsonl"
    }


def add(w: Path, *args: str):
    return CliRunner().invoke(app, ["corpus", "add", *args, "--warehouse", str(w)])


def refused(w: Path, args: list[str], *needles: str) -> str:
    before = state(w)
    res = add(w, *args)
    out = res.output.strip()
    assert res.exit_code == 2, out
    assert out.startswith("error: ") and len(out.splitlines()) == 1 and "Traceback" not in out, out
    line = " ".join(out.split())
    for n in needles:
        assert n in line, line
    assert state(w) == before and not (w / "corpora.toml").exists() and not (w / "raw").exists()
    return line


def write(p: Path, text: str, encoding: str = "utf-8") -> Path:
    p.write_bytes(text.encode(encoding))
    return p


def test_duplicated_text_id(warehouse, tmp_path):
    f = write(tmp_path / "texts.csv", "text_id,text\n1,The cat sat.\n2,A dog ran.\n1,Again.\n")
    refused(warehouse, ["mine", "--texts", str(f)], str(f), "line 4", "text_id '1' appears twice (first on line 2)")


def test_duplicated_word_id(warehouse, tmp_path):
    f = write(tmp_path / "words.tsv", "text_id\tword_id\tword\n1\ta\tThe\n1\tb\tcat\n1\ta\tsat\n")
    refused(warehouse, ["mine", "--texts", str(f)], str(f), "line 4", "word_id 'a' appears twice")


def test_empty_text(warehouse, tmp_path):
    f = write(tmp_path / "texts.csv", 'text_id,text\n1,The cat sat.\n2,"   "\n')
    refused(warehouse, ["mine", "--texts", str(f)], str(f), "line 3", "text '2' is empty")


def test_word_row_that_does_not_join(warehouse, files, tmp_path):
    rt = tmp_path / "rt.csv"
    rt.write_text(files["rt"].read_text() + "2,9999,300\n")
    n = len(rt.read_text().splitlines())
    refused(
        warehouse,
        ["mine", "--texts", str(files["words"]), "--reading-times", str(rt), "--measure", "spr"],
        str(rt),
        f"line {n}",
        "text '2' word '9999' is not a word of the texts",
    )


@pytest.mark.parametrize(
    "value, problem",
    [
        ("-12.5", "-12.5 is not a reading time > 0 ms"),
        ("fast", "'fast' is not a number"),
        ("0", "0 is not a reading time"),
        # a failed computation, not "not read" (that is empty or NA)
        ("NaN", "'NaN' is not a finite number"),
        ("nan", "'nan' is not a finite number"),
        ("inf", "'inf' is not a finite number"),
        ("null", "'null' is not a number"),
    ],
)
def test_reading_time_negative_or_not_a_number(warehouse, files, tmp_path, value, problem):
    lines = files["rt"].read_text().splitlines()
    t, w, _ = lines[5].split(",")
    lines[5] = f"{t},{w},{value}"
    rt = write(tmp_path / "rt.csv", "\n".join(lines) + "\n")
    refused(
        warehouse,
        ["mine", "--texts", str(files["words"]), "--reading-times", str(rt), "--measure", "spr"],
        str(rt),
        "line 6",
        "column rt_ms",
        problem,
    )


def test_nul_byte_inside_a_text(warehouse, tmp_path):
    """A NUL byte would be stored inside a word: refused, naming the file and the line."""
    f = tmp_path / "texts.csv"
    f.write_bytes(b"text_id,text\n1,The cat sat.\n2,A d\x00og ran.\n")
    refused(warehouse, ["mine", "--texts", str(f)], str(f), "line 3: a NUL byte")
    w = tmp_path / "words.tsv"
    w.write_bytes(b"text_id\tword_id\tword\n1\t1\tThe\n1\t2\tc\x00at\n")
    refused(warehouse, ["mine", "--texts", str(w)], str(w), "line 3: a NUL byte")


def test_unterminated_quote_is_named_without_the_readers_advice(warehouse, files, tmp_path):
    """polars' message for an unclosed quote goes on with advice about its own options: the error says
    which line opens the quote, and nothing of polars' options."""
    lines = files["rt"].read_text().splitlines()
    t, w, _ = lines[5].split(",")
    lines[5] = f'{t},{w},"300'
    rt = write(tmp_path / "rt.csv", "\n".join(lines) + "\n")
    line = refused(
        warehouse,
        ["mine", "--texts", str(files["words"]), "--reading-times", str(rt), "--measure", "spr"],
        str(rt),
        "line 6: a quoted field is never closed",
    )
    assert "infer_schema" not in line and "You might want" not in line and "ignore_errors" not in line


def test_unknown_measure(warehouse, files):
    refused(
        warehouse,
        ["mine", "--texts", str(files["words"]), "--reading-times", str(files["rt"]), "--measure", "dwell"],
        "--measure",
        "unknown measure 'dwell'",
        "gaze_duration",
    )


def test_file_in_another_encoding_than_declared(warehouse, tmp_path):
    f = write(tmp_path / "texts.csv", "text_id,text\n1,Le café est fermé.\n", encoding="latin-1")
    refused(warehouse, ["mine", "--texts", str(f)], str(f), "line 2: not valid utf-8 text", "offset 21")
    # declared right, it is read right
    res = add(warehouse, "mine", "--texts", str(f), "--encoding", "latin-1")
    assert res.exit_code == 0, res.output
    parsed = user_corpus.load_declared(make_paths(warehouse), load_declarations(make_paths(warehouse))["mine"])
    assert parsed.texts.words["word"].to_list() == ["Le", "café", "est", "fermé."]


def test_name_that_clashes_with_a_shipped_corpus(warehouse, files):
    refused(warehouse, ["provo", "--texts", str(files["words"])], "NAME", "'provo' clashes with a shipped corpus")
    refused(warehouse, ["My Corpus", "--texts", str(files["words"])], "NAME", "is not a corpus name")


def test_missing_column_and_unknown_file_type(warehouse, tmp_path, files):
    f = write(tmp_path / "texts.csv", "id,body\n1,The cat.\n")
    refused(warehouse, ["mine", "--texts", str(f)], str(f), "needs columns text_id and text", "the file has id, body")
    x = write(tmp_path / "texts.xlsx", "x")
    refused(warehouse, ["mine", "--texts", str(x)], str(x), "unknown file type .xlsx")
    refused(
        warehouse,
        [
            "mine",
            "--texts",
            str(files["words"]),
            "--reading-times",
            str(files["rt"]),
            "--measure",
            "spr",
            "--units",
            "minutes",
        ],
        "--units",
        "'minutes' is not allowed",
    )


@pytest.mark.parametrize(
    "language, needle",
    [
        ("xx", "'xx' is not allowed; an ISO 639-1 code wordfreq has a word list for: ar, bg"),
        ("EN", "'EN' is not allowed"),
        ("", "'' is not allowed"),
    ],
)
def test_a_language_wordfreq_has_no_list_for_is_refused(warehouse, files, language, needle):
    refused(warehouse, ["mine", "--texts", str(files["words"]), "--language", language], "--language", needle)


def test_the_layouts_and_files_parse_as_declared(warehouse, tmp_path, files):
    """Texts as rows, as words with `after`, as a folder of .txt; per-reader times in seconds with a skipped word
    (empty cell; an eye tracker's 0); per-word means; cloze counts; the user's frequencies."""
    p = make_paths(warehouse)
    folder = tmp_path / "texts"
    folder.mkdir()
    write(folder / "a.txt", "The cat sat.\n")
    write(folder / "b.txt", "A  dog ran away.")
    rt = write(
        tmp_path / "rt.jsonl",
        "\n".join(
            json.dumps(r)
            for r in [
                {"text_id": "a", "word_id": 0, "reader_id": "r1", "first_fixation": 0.2, "gaze_duration": 0.25},
                {"text_id": "a", "word_id": 1, "reader_id": "r1", "first_fixation": 0, "gaze_duration": ""},
                {"text_id": "b", "word_id": 3, "reader_id": "r2", "first_fixation": 0.18, "gaze_duration": 0.3},
            ]
        )
        + "\n",
    )
    cz = write(tmp_path / "cloze.tsv", "text_id\tword_id\tresponse_count\tn_responses\na\t2\t3\t40\n")
    fq = write(tmp_path / "freq.csv", "text_id,word_id,zipf_frequency\na,0,7.2\nb,2,NA\n")
    res = add(
        warehouse,
        "lab",
        "--texts",
        str(folder),
        "--reading-times",
        str(rt),
        "--measure",
        "first_fixation",
        "--measure",
        "gaze_duration",
        "--units",
        "s",
        "--cloze",
        str(cz),
        "--frequencies",
        str(fq),
        "--json",
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert (out["texts"], out["words"], out["reading_time_rows"], out["cloze_rows"]) == (2, 7, 4, 1)
    parsed = user_corpus.load_declared(p, load_declarations(p)["lab"])
    w = parsed.texts.words
    assert w.filter(pl.col("doc_id") == "b")["word"].to_list() == ["A", "dog", "ran", "away."]
    assert w.filter(pl.col("doc_id") == "b")["char_start"].to_list() == [0, 3, 7, 11]  # the double space kept
    r = parsed.reading_times[0].sort("measure", "doc_id", "word_index")
    assert r.select("measure", "doc_id", "word_index", "rt_ms").rows() == [
        ("first_fixation", "a", 0, 200.0),
        ("first_fixation", "b", 3, 180.0),
        ("gaze_duration", "a", 0, 250.0),
        ("gaze_duration", "b", 3, 300.0),
    ]  # skipped words: no row, never 0 ms
    # a row of raw.cloze_norms, as the shipped corpora's: the counts c of N, the corpus word, the file's line
    assert parsed.cloze.select(
        "corpus",
        "doc_id",
        "word_index",
        "word",
        "cloze_probability_published",
        "response_count",
        "n_responses",
        "smoothing",
        "upstream_row",
    ).rows() == [("lab", "a", 2, "sat.", None, 3, 40, "none", 2)]
    assert parsed.frequencies.select("doc_id", "word_index", "zipf_frequency").rows() == [("a", 0, 7.2), ("b", 2, None)]
    # words with the characters between them
    f = write(tmp_path / "w.csv", 'text_id,word,after\n1,"Hello,"," "\n1,world,"\n"\n1,again.,\n')
    res = add(warehouse, "lab2", "--texts", str(f))
    assert res.exit_code == 0, res.output
    docs = user_corpus.load_declared(p, load_declarations(p)["lab2"]).texts.docs
    assert docs["text"].to_list() == ["Hello, world\nagain."]
    # the declaration records each copy's sha256, and a changed copy is refused at ingest
    d = load_declarations(p)["lab"]
    assert d.texts.sha256 == user_corpus.sha256_path(folder) and d.measures == ("first_fixation", "gaze_duration")
    write(p.raw / d.cloze.path, "text_id\tword_id\tresponse_count\tn_responses\na\t2\t4\t40\n")
    with pytest.raises(IngestError, match="is not the declared"):
        user_corpus.load_declared(p, d)
    (p.raw / d.cloze.path).unlink()
    with pytest.raises(IngestError, match="missing from the warehouse; run `predictabase corpus add` again"):
        user_corpus.load_declared(p, d)
    # a second add of the same name needs --replace
    line = refused_keep(warehouse, ["lab", "--texts", str(folder)])
    assert "corpus 'lab' exists; `--replace` replaces its files" in line


def refused_keep(w: Path, args: list[str]) -> str:
    before = state(w)
    res = add(w, *args)
    assert res.exit_code == 2 and state(w) == before
    return " ".join(res.output.split())
