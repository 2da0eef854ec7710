"""The top-1 game (Shlegeris et al. 2024, sec. 3): ingest (raw.top1_guesses, raw.top1_reference_accuracies,
raw.game_vocabulary), the python_literal reader, and the dbt staging/intermediate layer
(int_top1_guesses, int_top1_questions) checked against an independent reading of the mirror's JSON files.

One module-scoped warehouse: the fetched catalog copied, lm_game + the three top1 jobs ingested, and
`dbt build` of the top1 staging/intermediate models, seeds and tests plus the two core staging views
they read (stg_game_doc_tokens, stg_documents).
"""

from __future__ import annotations

import collections
import json
import os
import shutil
from pathlib import Path

import pytest

from predictabase.core.config import Paths
from predictabase.core.config import paths as make_paths
from predictabase.core.errors import IngestError
from predictabase.ingest.datasets import top1_game
from predictabase.ingest.datasets.registry import JOBS, NAMES, run_ingest
from predictabase.ingest.sources import readers
from predictabase.ingest.sources.definitions import dataset_names
from tests.helpers import q

JOBS_TOP1 = ["lm_game_top1", "lm_game_model_perfs", "lm_game_vocabulary"]
GUESSES = "lm_game/analysis/results_raw/res_accuracy_anonym.json"
TOKENS = "lm_game/server/tokens.json"
DOCS = "lm_game/server/docs"
RESULTS = "lm_game/analysis/results_raw"
DBT_SELECT = (
    "path:models/staging/top1 int_top1_guesses int_top1_questions path:seeds/top1 path:tests/top1 "
    "stg_game_doc_tokens stg_documents"
)
TESTERS = {"-6247052403041399844", "7513247084907933005", "3056584949900737159"}  # the authors' code
ANON = "1812031566398576187"  # inferred (seed top1_excluded_players)


# ------------------------------------------------------------------ independent reading of the mirror


@pytest.fixture(scope="module")
def upstream(mirror: Path) -> dict:
    """The guesses and the documents read with plain Python, and every row's expected fields."""
    rows = json.loads((mirror / GUESSES).read_text(encoding="utf-8"))
    docs = {int(p.stem[3:]): json.loads(p.read_text(encoding="utf-8")) for p in (mirror / DOCS).glob("doc*.json")}
    expected = {}
    for rid, user, guess, _correct, pos, doc in rows:
        toks = docs[doc]
        true = toks[pos - 1] if pos <= len(toks) else None
        nxt = toks[pos] if pos < len(toks) else None
        context = "".join(toks[: pos - 1])
        impossible = true is not None and ("\n" in true or "\ufffd" in true)
        word = (
            true is not None
            and len(true) > 1
            and true[0] == " "
            and true[1:].isalpha()
            and nxt is not None
            and nxt.startswith(" ")
        )
        excluded = str(user) in TESTERS | {ANON}
        expected[rid] = dict(
            player_id=str(user),
            doc_id=str(doc),
            position=pos,
            guess=guess,
            true_token=true,
            true_char_start=len(context) if true is not None else None,
            true_char_end=len(context) + len(true) if true is not None else None,
            next_token=nxt,
            is_out_of_range=true is None,
            is_impossible=impossible,
            is_word_token=word,
            is_excluded_player=excluded,
            is_correct=None if true is None else guess == true,
            in_analysis=true is not None and not impossible and not excluded,
            context_tail=context[-80:],
        )
    return {"rows": rows, "docs": docs, "expected": expected}


@pytest.fixture(scope="module")
def top1_warehouse(fetched_raw: Paths, tmp_path_factory) -> Paths:
    from predictabase.warehouse.dbt import run_dbt

    p = make_paths(tmp_path_factory.mktemp("top1") / "warehouse")
    shutil.copytree(fetched_raw.raw, p.raw)
    run_ingest(p, ["lm_game", *JOBS_TOP1], show_progress=False)
    with pytest.MonkeyPatch.context() as mp:
        # cautious: no test of a model outside the selection (e.g. a mart reading int_top1_guesses) runs
        mp.setenv("DBT_INDIRECT_SELECTION", "cautious")
        run_dbt(p, "build", DBT_SELECT)
    return p


# ------------------------------------------------------------------ the jobs


def test_the_three_jobs_are_part_of_the_default_ingest():
    for name in JOBS_TOP1:
        assert name in NAMES and name in dataset_names()
        assert JOBS[name].write is not None
    assert NAMES.index("lm_game") < min(NAMES.index(n) for n in JOBS_TOP1)


def test_raw_top1_guesses_keeps_every_upstream_row(top1_warehouse, upstream):
    rows = upstream["rows"]
    got = q(
        top1_warehouse,
        "select row_id, player_id, doc_id, position, guess, correct_answer_upstream, "
        "source_path, source_sha256 from raw.top1_guesses",
    )
    assert len(got) == len(rows) == 25203
    want = {(r[0], str(r[1]), str(r[5]), r[4], r[2], r[3]) for r in rows}
    assert {g[:6] for g in got} == want
    assert {g[6] for g in got} == {GUESSES} and len({g[7] for g in got}) == 1
    assert len({r[1] for r in rows}) == 71 and len({r[5] for r in rows}) == 469
    assert q(top1_warehouse, "select count(distinct player_id), count(distinct doc_id) from raw.top1_guesses") == [
        (71, 469)
    ]
    types = dict(
        q(
            top1_warehouse,
            "select column_name, data_type from information_schema.columns "
            "where table_schema = 'raw' and table_name = 'top1_guesses'",
        )
    )
    assert types == {
        "row_id": "BIGINT",
        "player_id": "VARCHAR",
        "doc_id": "VARCHAR",
        "position": "INTEGER",
        "guess": "VARCHAR",
        "correct_answer_upstream": "VARCHAR",
        "source_path": "VARCHAR",
        "source_sha256": "VARCHAR",
    }
    # the upstream correct_answer is a front-end bug: it equals the true token in under 1% of rows
    exp = upstream["expected"]
    agree = sum(r[3] == exp[r[0]]["true_token"] for r in rows)
    assert agree / len(rows) < 0.01


def test_reference_accuracies(top1_warehouse, mirror):
    files = sorted((mirror / RESULTS).glob("model_perfs*.json"))
    want = {(f.name, m, float(a)) for f in files for m, a in json.loads(f.read_text()).items()}
    got = q(top1_warehouse, "select reference_file, model_name, accuracy from raw.top1_reference_accuracies")
    assert len(files) == 7 and len(got) == len(want) == 31 and set(got) == want
    acc = {(f, m): a for f, m, a in got}
    assert acc[("model_perfs.json", "davinci")] == 0.56  # the paper's GPT-3 56%
    assert acc[("model_perfs_new_new_new_orig.json", "gpt-neo-125m")] == 0.38  # Figure 1
    # every file has a subset in the seed; word-token files are below their _orig twins
    subsets = dict(q(top1_warehouse, "select reference_file, subset from reference.top1_reference_files"))
    assert set(subsets) == {f.name for f in files}
    for f, m in acc:
        if subsets[f] == "word_tokens":
            assert acc[(f, m)] < acc[(f.replace(".json", "_orig.json"), m)]


def test_vocabulary_is_gpt2_in_id_order(top1_warehouse, mirror):
    """tokens.json is a Python literal; token_id i is GPT-2's id i, decoded alone with transformers' old
    tokenization clean-up (checked for every id against GPT-2's own encoder.json)."""
    from tests.conftest import gpt2_tokenizer_files

    tokens = readers.python_literal((mirror / TOKENS).read_bytes(), TOKENS)
    with pytest.raises(json.JSONDecodeError):
        json.loads((mirror / TOKENS).read_text(encoding="utf-8"))  # not JSON
    assert isinstance(tokens, list) and len(tokens) == 50257
    assert (tokens[13], tokens[262], tokens[198], tokens[50256]) == (".", " the", "\n", "<|endoftext|>")
    # GPT-2's byte-level alphabet (bytes_to_unicode), inverted
    bs = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    byte_of = {chr(c): b for b, c in zip(bs, cs)}
    encoder = json.loads((gpt2_tokenizer_files() / "encoder.json").read_text(encoding="utf-8"))
    by_id = {i: bytes(byte_of[ch] for ch in s).decode("utf-8", errors="replace") for s, i in encoder.items()}
    cleanup = [
        (" .", "."),
        (" ?", "?"),
        (" !", "!"),
        (" ,", ","),
        (" ' ", "'"),
        (" n't", "n't"),
        (" 'm", "'m"),
        (" 's", "'s"),
        (" 've", "'ve"),
        (" 're", "'re"),
    ]

    def cleaned(s: str) -> str:
        for a, b in cleanup:
            s = s.replace(a, b)
        return s

    assert len(by_id) == 50257
    assert [i for i in range(50257) if tokens[i] != by_id[i]] == [
        764,
        837,
        2644,
        5145,
        5633,
        11485,
        14512,
        19153,
        19424,
        20004,
        22135,
        24457,
        34913,
        35713,
        37867,
        39864,
        41349,
        42911,
        44713,
        44912,
        46328,
        47082,
        47540,
    ]
    assert tokens[764] == "." and by_id[764] == " ."
    assert all(tokens[i] == cleaned(by_id[i]) for i in range(50257))
    assert sum("\ufffd" in t for t in tokens) == 352 and len(set(tokens)) == 49904
    got = q(top1_warehouse, "select token_id, token from raw.game_vocabulary order by token_id")
    assert got == list(enumerate(tokens))
    # every guess and every document token is a string of the game's vocabulary
    assert q(
        top1_warehouse, "select count(*) from raw.top1_guesses g anti join raw.game_vocabulary v on v.token = g.guess"
    ) == [(0,)]
    assert q(
        top1_warehouse,
        "select count(*) from raw.game_doc_tokens t anti join raw.game_vocabulary v on v.token = t.token",
    ) == [(0,)]


def test_rerun_replaces_never_duplicates(top1_warehouse, tmp_path):
    p = make_paths(tmp_path / "warehouse")
    shutil.copytree(top1_warehouse.raw, p.raw)
    first = run_ingest(p, JOBS_TOP1, show_progress=False)
    assert (
        run_ingest(p, JOBS_TOP1, show_progress=False)
        == first
        == {
            "lm_game_top1": {"top1_guesses": 25203},
            "lm_game_model_perfs": {"top1_reference_accuracies": 31},
            "lm_game_vocabulary": {"game_vocabulary": 50257},
        }
    )


# ------------------------------------------------------------------ one-line errors


def _one_line(exc: pytest.ExceptionInfo, path: str) -> str:
    text = str(exc.value)
    assert "\n" not in text and text.startswith(f"{path}: "), text
    return text


@pytest.mark.parametrize(
    "data, match",
    [
        (b"['a', 'b'", r"truncated or malformed Python literal \('\[' was never closed at line 1, column 1\)"),
        (b"['a', nan, 'c']", r"not a Python literal: `nan` at line 1, column 7"),
        (b"__import__('os').system('true')", r"not a Python literal: `__import__\('os'\)\.system\('true'\)`"),
        (b"['a',\n 'b',\n 3x]", r"malformed Python literal \(invalid decimal literal at line 3"),
        (b"  \n", r"file is empty"),
        (b"['caf\xe9']", r"not valid utf-8"),
    ],
)
def test_python_literal_errors_are_one_line(data, match):
    with pytest.raises(IngestError, match=match) as exc:
        readers.python_literal(data, TOKENS)
    _one_line(exc, TOKENS)


def test_python_literal_never_evaluates(tmp_path):
    marker = tmp_path / "ran"
    with pytest.raises(IngestError):
        readers.python_literal(f"open({str(marker)!r}, 'w')".encode(), TOKENS)
    assert not marker.exists()
    value = readers.python_literal(b"{'a': [1, -2.5, 'x'], 'b': (None, True)}", "f")
    assert value == {"a": [1, -2.5, "x"], "b": (None, True)}


def test_vocabulary_errors(mirror):
    data = (mirror / TOKENS).read_bytes()
    assert len(top1_game.parse_vocabulary(data, TOKENS)) == 50257
    with pytest.raises(IngestError, match="50256 tokens, expected the 50257 of GPT-2") as exc:
        top1_game.parse_vocabulary(data.replace(b", '<|endoftext|>']", b"]"), TOKENS)
    _one_line(exc, TOKENS)
    swapped = data.replace(b"'!', '\"'", b"'\"', '!'", 1)  # ids 0 and 1 swapped
    with pytest.raises(IngestError, match="token 0 is '\"', GPT-2's id 0 is '!': not in GPT-2 id order"):
        top1_game.parse_vocabulary(swapped, TOKENS)
    with pytest.raises(IngestError, match="expected a list of token strings, got a dict"):
        top1_game.parse_vocabulary(b"{'a': 1}", TOKENS)
    with pytest.raises(IngestError, match="token 1 is 7"):
        top1_game.parse_vocabulary(b"['!', 7" + b", 'x'" * 50255 + b"]", TOKENS)


@pytest.mark.parametrize(
    "data, match",
    [
        (b'[[1, 2, " a", "b", 3, 1003], [2, 2, " a", 3, 1003]]', r"row 1: expected \[id, user, guess"),
        (b'[[1, 2, " a", "b", 3, 1003], [1, 2, " a", "b", 3, 1003]]', r"row 1: id 1 appears twice"),
        (b'[[1, true, " a", "b", 3, 1003]]', r"row 0 \(id 1\): user True is not an integer hash"),
        (b'[[1, 2, "", "b", 3, 1003]]', r"row 0 \(id 1\): guess '' is not a non-empty string"),
        (b'[[1, 2, " a", null, 3, 1003]]', r"row 0 \(id 1\): correct_answer None is not a string"),
        (b'[[1, 2, " a", "b", 0, 1003]]', r"row 0 \(id 1\): guessed_token_idx 0 is not a positive integer"),
        (b'[[1, 2, " a", "b", 2.0, 1003]]', r"row 0 \(id 1\): guessed_token_idx 2\.0"),
        (b'[[1, 2, " a", "b", 3, "1003"]]', r"row 0 \(id 1\): doc_id '1003' is not a non-negative integer"),
        (
            b'[[1, 2, " a", "b", 3, 77777]]',
            r"row 0 \(id 1\): doc_id 77777 has no document in the catalog "
            r"\(lm_game/server/docs/doc77777\.json\)",
        ),
        (b'[[1, 2, " a", "b", 3, 1003], [2, 2', r"truncated or malformed JSON"),
        (b'{"rows": []}', r"expected a non-empty JSON list of rows"),
    ],
)
def test_guess_rows_are_validated(data, match):
    with pytest.raises(IngestError, match=match) as exc:
        top1_game.parse_guesses(data, GUESSES, top1_game._document_ids())
    _one_line(exc, GUESSES)


@pytest.mark.parametrize(
    "data, match",
    [
        (b'{"davinci": 1.5}', r"model 'davinci': accuracy 1\.5 is not a number in \[0, 1\]"),
        (b'{"davinci": "0.5"}', r"accuracy '0\.5' is not a number"),
        (b'{"davinci": NaN}', r"accuracy nan is not a number"),
        (b"[0.5]", r"expected a non-empty JSON object"),
        (b'{"davinci": 0.5', r"truncated or malformed JSON"),
    ],
)
def test_model_perfs_are_validated(data, match):
    path = f"{RESULTS}/model_perfs.json"
    with pytest.raises(IngestError, match=match) as exc:
        top1_game.parse_model_perfs(data, path)
    _one_line(exc, path)


def test_a_bad_file_stops_the_command_before_anything_is_written(top1_warehouse, tmp_path):
    from predictabase.core.errors import ChecksumError

    p = make_paths(tmp_path / "warehouse")
    shutil.copytree(top1_warehouse.raw, p.raw)
    target = p.raw / TOKENS
    os.chmod(target, 0o644)
    target.write_bytes(target.read_bytes()[:-10])
    with pytest.raises(ChecksumError, match=TOKENS):
        run_ingest(p, JOBS_TOP1, show_progress=False)
    assert not p.duckdb.exists() or q(
        p, "select count(*) from information_schema.tables where table_schema = 'raw' and table_name like 'top1%'"
    ) == [(0,)]


# ------------------------------------------------------------------ dbt: int_top1_guesses, int_top1_questions

COLUMNS = [
    "player_id",
    "doc_id",
    "position",
    "guess",
    "true_token",
    "true_char_start",
    "true_char_end",
    "next_token",
    "is_out_of_range",
    "is_impossible",
    "is_word_token",
    "is_excluded_player",
    "is_correct",
    "in_analysis",
    "context_tail",
]


def test_int_top1_guesses_matches_an_independent_reading(top1_warehouse, upstream):
    got = q(top1_warehouse, f"select row_id, {', '.join(COLUMNS)} from intermediate.int_top1_guesses")
    exp = upstream["expected"]
    assert len(got) == len(exp) == 25203
    mismatches = [(r[0], c, v, exp[r[0]][c]) for r in got for c, v in zip(COLUMNS, r[1:]) if v != exp[r[0]][c]]
    assert mismatches == []


def test_true_tokens_hand_checked(top1_warehouse, mirror):
    """Rows checked by hand against docs/doc5190.json: [1, 1812031566398576187, ' time', '(', 7, 5190] is the
    game's first row; its true token is doc5190.json[6]."""
    doc = json.loads((mirror / DOCS / "doc5190.json").read_text())
    assert doc[:9] == ["If", " you", "'ve", " ever", " spent", " any", " time", " on", " Reddit"]
    got = {
        r[0]: r[1:]
        for r in q(
            top1_warehouse,
            """
        select row_id, guess, true_token, next_token, is_correct, context_tail, true_char_start, exclusion_basis
        from intermediate.int_top1_guesses where row_id in (1, 2, 3, 1725) order by row_id""",
        )
    }
    assert got[1] == (" time", " time", " on", True, "If you've ever spent any", 24, "inferred_anon")
    assert got[2] == (" playing", " on", " Reddit", False, "If you've ever spent any time", 29, "authors_analysis_code")
    assert got[3][:4] == (" the", " Reddit", ",", False)
    # row 1725: position 176 of a 175-token document (doc5034): past the end, no true token
    assert got[1725][:4] == (" ", None, None, None)


def test_flag_counts(top1_warehouse, upstream):
    exp = upstream["expected"].values()
    n_oor, n_imp, n_word = (sum(e[k] for e in exp) for k in ("is_out_of_range", "is_impossible", "is_word_token"))
    got = q(
        top1_warehouse,
        """select count(*), count(*) filter (where is_out_of_range),
        count(*) filter (where is_impossible), count(*) filter (where is_word_token),
        count(*) filter (where in_analysis) from intermediate.int_top1_guesses""",
    )[0]
    assert got == (25203, n_oor, n_imp, n_word, sum(e["in_analysis"] for e in exp))
    assert n_oor == 8
    assert n_imp == 1590 and round(100 * n_imp / 25203, 1) == 6.3  # the paper's 6.3%
    assert n_word == 15071 and round(100 * n_word / 25203, 1) == 59.8
    # every past-the-end row points exactly one token past the end
    assert q(
        top1_warehouse,
        "select distinct position - n_doc_tokens from intermediate.int_top1_guesses where is_out_of_range",
    ) == [(1,)]


def test_word_token_regexp_agrees_with_python_isalpha(top1_warehouse):
    """'^ \\p{L}+$' (DuckDB/RE2) = ' ' + str.isalpha() (Python) on every vocabulary and document token."""
    rows = q(
        top1_warehouse,
        r"""
        select token, regexp_matches(token, '^ \p{L}+$') from raw.game_vocabulary
        union all select token, regexp_matches(token, '^ \p{L}+$') from raw.game_doc_tokens""",
    )
    assert len(rows) > 50257
    assert [t for t, m in rows if m != (len(t) > 1 and t[0] == " " and t[1:].isalpha())] == []


def test_exclusions_and_the_papers_38_players(top1_warehouse, upstream):
    rows = upstream["rows"]
    seed = dict(q(top1_warehouse, "select player_id, basis from reference.top1_excluded_players"))
    assert seed == {**{t: "authors_analysis_code" for t in TESTERS}, ANON: "inferred_anon"}
    # the inferred "anon" account: 200 documents, from the collection's first row id to its last; others <= 45
    docs_of = collections.defaultdict(set)
    for r in rows:
        docs_of[str(r[1])].add(r[5])
    assert len(docs_of[ANON]) == 200 and max(len(d) for u, d in docs_of.items() if u != ANON) <= 45
    ids = [r[0] for r in rows if str(r[1]) == ANON]
    assert (min(ids), max(ids)) == (min(r[0] for r in rows), max(r[0] for r in rows))
    # applied: flagged, not deleted
    flagged = dict(
        q(
            top1_warehouse,
            "select player_id, any_value(exclusion_basis) from intermediate.int_top1_guesses "
            "where is_excluded_player group by 1",
        )
    )
    assert flagged == seed
    n_excluded_rows = sum(str(r[1]) in seed for r in rows)
    assert q(top1_warehouse, "select count(*) from intermediate.int_top1_guesses where is_excluded_player") == [
        (n_excluded_rows,)
    ]
    # the analysis: 18,029 rows (18,036 if the 7 past-the-end rows of kept players counted), 67 players,
    # 38 with >= 50 answers (the paper's 38; > 50 gives the same 38)
    per_player = collections.Counter(e["player_id"] for e in upstream["expected"].values() if e["in_analysis"])
    n_rows, n_players, n_50, n_over_50, n_correct = q(
        top1_warehouse,
        """
        with p as (select player_id, count(*) as n from intermediate.int_top1_guesses where in_analysis group by 1)
        select (select count(*) from intermediate.int_top1_guesses where in_analysis), count(*),
               count(*) filter (where n >= 50), count(*) filter (where n > 50),
               (select count(*) from intermediate.int_top1_guesses where in_analysis and is_correct) from p""",
    )[0]
    assert (n_rows, n_players) == (sum(per_player.values()), len(per_player)) == (18029, 67)
    assert n_50 == n_over_50 == sum(n >= 50 for n in per_player.values()) == 38
    assert round(n_correct / n_rows, 2) == 0.29  # the paper's mean accuracy, 29%
    # without the inferred exclusion the same rule gives 39 players
    with_anon = collections.Counter(
        e["player_id"]
        for e in upstream["expected"].values()
        if e["player_id"] not in TESTERS and not e["is_out_of_range"] and not e["is_impossible"]
    )
    assert sum(n >= 50 for n in with_anon.values()) == 39


def test_int_top1_questions(top1_warehouse, upstream):
    exp = upstream["expected"].values()
    per_q = collections.defaultdict(lambda: [0, 0, 0])
    for e in exp:
        k = per_q[(e["doc_id"], e["position"])]
        k[0] += 1
        k[1] += e["in_analysis"]
        k[2] += bool(e["in_analysis"] and e["is_correct"])
    got = q(
        top1_warehouse,
        "select doc_id, position, n_guesses, n_guesses_in_analysis, n_correct_in_analysis "
        "from intermediate.int_top1_questions",
    )
    assert {(d, p): [a, b, c] for d, p, a, b, c in got} == dict(per_q)
    assert len(got) == len(per_q)
    # the question's true token is the same as on each of its guess rows
    assert q(
        top1_warehouse,
        """select count(*) from intermediate.int_top1_guesses g
        join intermediate.int_top1_questions q using (doc_id, position)
        where g.true_token is distinct from q.true_token or g.context_tail is distinct from q.context_tail""",
    ) == [(0,)]
