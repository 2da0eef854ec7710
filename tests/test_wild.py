"""Prompts in the wild (Casares et al. 2022): ingest, decryption failures, and the dbt marts on the real data.

Plaintext never leaves memory here: the tests decrypt with `cryptography` in-process, compare numbers,
and assert on error messages and row counts only (no prompt text in asserts, files or logs).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pytest
from cryptography.fernet import Fernet

from predictabase.core.config import DBT_PROJECT_DIR, Paths
from predictabase.core.config import paths as make_paths
from predictabase.core.errors import ChecksumError, IngestError
from predictabase.ingest.datasets.wild import README_PATH, TABLES, WITH_PATH, WITHOUT_PATH, decrypt_json, ingest_wild
from predictabase.ingest.sources.catalog import by_path, files_for
from predictabase.ingest.sources.fetch import fetch_one
from predictabase.warehouse.dbt import dbt_env
from tests.helpers import q as _q

DOMAINS = ["numeric", "communication", "reasoning", "writing"]


def _fetch_wild(p: Paths, mirror: Path) -> None:
    for sf in files_for("wild") + [by_path(README_PATH)]:
        fetch_one(sf, p, mirror)


def _wild_state(p: Paths) -> dict[str, object]:
    """Row counts and a content checksum per raw.wild_* table (None when absent)."""
    if not p.duckdb.exists():
        return {}
    con = duckdb.connect(str(p.duckdb), read_only=True)
    try:
        present = {
            r[0]
            for r in con.execute(
                "select table_name from information_schema.tables where table_schema = 'raw'"
            ).fetchall()
        }
        return {
            t: (
                con.execute(f"select count(*), sum(hash(columns(*))) from raw.{t}").fetchone() if t in present else None
            )
            for t in TABLES
        }
    finally:
        con.close()


def _drop_warehouse(p: Paths) -> None:
    """Remove a test warehouse holding decrypted text, so no plaintext outlives the test."""
    for f in (p.duckdb, p.duckdb.with_name(p.duckdb.name + ".wal")):
        f.unlink(missing_ok=True)


@pytest.fixture
def wild_paths(tmp_paths: Paths, mirror: Path):
    _fetch_wild(tmp_paths, mirror)
    yield tmp_paths
    _drop_warehouse(tmp_paths)


@pytest.fixture(scope="module")
def built(mirror: Path, tmp_path_factory):
    """A warehouse with the wild data ingested and `dbt build` run on the wild domain (tag:wild: its
    seeds, models, unit tests and data tests)."""
    root = tmp_path_factory.mktemp("wild")
    p = make_paths(root / "warehouse")
    _fetch_wild(p, mirror)
    ingest_wild(p)
    env = dict(os.environ, **dbt_env(p), DBT_SEND_ANONYMOUS_USAGE_STATS="false")
    dbt = Path(sys.executable).with_name("dbt")
    res = subprocess.run(
        [
            str(dbt),
            "build",
            "--project-dir",
            str(DBT_PROJECT_DIR),
            "--profiles-dir",
            str(DBT_PROJECT_DIR),
            "--target-path",
            str(root / "target"),
            "--log-path",
            str(root / "logs"),
            "--select",
            "tag:wild",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    try:
        assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
        yield p
    finally:
        _drop_warehouse(p)


def _decrypted(mirror: Path) -> tuple[dict, dict]:
    """Independent decryption (in memory) of the mirror's files with the README's key."""
    key = re.search(rb"key = b'([^']+)'", (mirror / README_PATH).read_bytes()).group(1)
    f = Fernet(key)
    return tuple(json.loads(f.decrypt((mirror / path).read_bytes())) for path in (WITH_PATH, WITHOUT_PATH))


# ---------------------------------------------------------------- ingest


def test_ingest_counts_idempotent_and_no_plaintext_files(wild_paths: Paths) -> None:
    before = {q for q in wild_paths.warehouse.rglob("*") if q.is_file()}
    counts = ingest_wild(wild_paths)
    # 36 + 34 respondents; 12 items; 36x12x3 + 34x12x2 times; 70x12 ratings; 36x12x3 + 34x12 texts
    assert counts == {
        "wild_respondents": 70,
        "wild_tasks": 12,
        "wild_efforts": 2112,
        "wild_scores": 840,
        "wild_texts": 1704,
    }
    state = _wild_state(wild_paths)
    assert ingest_wild(wild_paths) == counts and _wild_state(wild_paths) == state  # re-run replaces
    after = {q for q in wild_paths.warehouse.rglob("*") if q.is_file()}
    # the only new files are the warehouse itself (no decrypted copy anywhere)
    assert {q.name for q in after - before} <= {"predictabase.duckdb", "predictabase.duckdb.wal"}
    rows = _q(wild_paths, "select source_path, count(*) from raw.wild_scores group by 1 order by 1")
    assert rows == [(WITH_PATH, 432), (WITHOUT_PATH, 408)]
    prov = _q(wild_paths, "select distinct source_sha256 from raw.wild_respondents where condition = 'with_model'")
    assert prov == [(by_path(WITH_PATH).sha256,)]


def test_wrong_key_raises_and_writes_nothing(wild_paths: Paths) -> None:
    wrong = Fernet.generate_key()
    with pytest.raises(IngestError) as exc:
        ingest_wild(wild_paths, key=wrong)
    assert exc.value.file is not None and exc.value.file.endswith("encoded_with_GPT3.json")
    assert "wrong key or tampered" in str(exc.value)
    assert _wild_state(wild_paths) in ({}, {t: None for t in TABLES})  # fresh warehouse: nothing created

    ingest_wild(wild_paths)
    state = _wild_state(wild_paths)
    with pytest.raises(IngestError):
        ingest_wild(wild_paths, key=wrong)
    assert _wild_state(wild_paths) == state  # a failed run leaves the previous load untouched


def test_tampered_file_raises_and_writes_nothing(wild_paths: Paths, tmp_path: Path) -> None:
    ingest_wild(wild_paths)
    state = _wild_state(wild_paths)
    target = wild_paths.raw / WITHOUT_PATH
    data = bytearray(target.read_bytes())
    data[200] ^= 0x01  # flip one bit of the ciphertext
    target.chmod(0o644)
    target.write_bytes(bytes(data))
    # through ingest: the catalog's sha256 catches it first, naming the file
    with pytest.raises(ChecksumError) as exc:
        ingest_wild(wild_paths)
    assert exc.value.file is not None and exc.value.file.endswith("encoded_without_GPT3.json")
    assert _wild_state(wild_paths) == state
    # and Fernet's own authentication catches it even past the checksum
    with pytest.raises(IngestError, match="wrong key or tampered") as exc2:
        decrypt_json(target, re.search(rb"key = b'([^']+)'", (wild_paths.raw / README_PATH).read_bytes()).group(1))
    assert exc2.value.file == WITHOUT_PATH  # named by its catalog path, wherever it lies


def test_missing_key_in_readme_is_a_clear_error(wild_paths: Paths, monkeypatch) -> None:
    import predictabase.ingest.datasets.wild as wild

    monkeypatch.setattr(wild, "_KEY_RE", re.compile(rb"no such key line (x)"))
    with pytest.raises(IngestError, match="Fernet key") as exc:
        ingest_wild(wild_paths)
    assert exc.value.file.endswith("README.md")
    assert _wild_state(wild_paths) in ({}, {t: None for t in TABLES})


# ---------------------------------------------------------------- dbt marts on the real data


def test_loss_conversion(built: Paths) -> None:
    # L_H = 1 - (s - 1)/4 (Casares et al. 2022, Methodology), every score 1..5 occurs in the data
    pairs = dict(_q(built, "select distinct usefulness_score, loss from intermediate.int_wild_losses"))
    assert pairs == {1: 1.0, 2: 0.75, 3: 0.5, 4: 0.25, 5: 0.0}


def test_effort_medians_match_independent_numpy(built: Paths, mirror: Path) -> None:
    a, b = _decrypted(mirror)

    def col(d: dict, c: str) -> np.ndarray:
        return np.array([np.nan if v is None else v for v in d[c].values()], dtype=float)

    mart = {(d, c): m for d, c, m in _q(built, "select domain, component, median_s from marts.mart_wild_effort")}
    for t, dom in enumerate(DOMAINS):
        items = [3 * t + k for k in (1, 2, 3)]
        prompt = [col(a, f"form_1_time_{i}") for i in items]
        first, later = np.median(prompt[0]), np.median(np.concatenate(prompt[1:]))
        expect = {
            "prompting_first_instance": first,
            "wrapping": later,
            "devising": first - later,
            "unwrapping": np.median(np.concatenate([col(a, f"form_2_time_{2 * i - 1}") for i in items])),
            "validating": np.median(np.concatenate([col(a, f"form_2_time_{2 * i}") for i in items])),
            "solving": np.nanmedian(np.concatenate([col(b, f"time_{2 * i - 1}") for i in items])),
            "self_rating": np.nanmedian(np.concatenate([col(b, f"time_{2 * i}") for i in items])),
        }
        for comp, value in expect.items():
            assert mart[(dom, comp)] == pytest.approx(value), (dom, comp)
    # the values themselves (Fig. 4; verified once with numpy on the decrypted data), seconds
    fig4 = {  # domain: (D_H, W_H, U_H, V_H, G_H)
        "numeric": (84.5, 81.5, 38.0, 6.0, 37.5),
        "communication": (157.5, 106.0, 44.0, 3.0, 170.5),
        "reasoning": (42.5, 60.5, 30.0, 3.0, 51.0),
        "writing": (36.5, 71.5, 26.0, 3.0, 191.5),
    }
    for dom, vals in fig4.items():
        got = tuple(mart[(dom, c)] for c in ("devising", "wrapping", "unwrapping", "validating", "solving"))
        assert got == vals, dom


def test_table1_matches_paper(built: Paths) -> None:
    rows = _q(built, "select domain, condition, loss_mean, test, p_value_holm from marts.mart_wild_loss")
    paper = {  # Table 1: (GPT-3, Human, Holm p)
        "numeric": (0.61, 0.31, 8e-6),
        "communication": (0.59, 0.38, 1.1e-4),
        "reasoning": (0.35, 0.35, 0.9),
        "writing": (0.47, 0.47, 0.9),
    }
    tests = {
        "numeric": "mann_whitney_u",
        "communication": "mann_whitney_u",
        "reasoning": "mann_whitney_u",
        "writing": "t_test",
    }
    assert len(rows) == 8
    for dom, cond, loss, test, p in rows:
        want = paper[dom][0 if cond == "with_model" else 1]
        # the paper prints two decimals: our mean must round to it (half a unit in the last place)
        assert abs(loss - want) <= 0.005 + 1e-12, (dom, cond, loss)
        assert test == tests[dom]  # Shapiro/Levene choice reproduces the caption's
        # printed p-values carry 1-2 significant digits: within half a unit of the last printed digit
        pp = paper[dom][2]
        half_unit = {8e-6: 0.5e-6, 1.1e-4: 0.05e-4, 0.9: 0.05}[pp]
        assert abs(p - pp) <= half_unit, (dom, p, pp)


def test_cost_follows_eq_2_and_3(built: Paths) -> None:
    rows = _q(
        built,
        "select domain, n_instances, loss_with_model, loss_without_model, d_h_s, w_h_s, u_h_s,"
        " v_h_s, g_h_s, c_h, c_h_m from marts.mart_wild_cost",
    )
    assert len(rows) == 4
    for _dom, n, lm, lh, d, w, u, v, g, ch, chm in rows:
        assert n == 3
        assert ch == pytest.approx(n * (lh + g))  # Eq. 2, beta = 1
        assert chm == pytest.approx(d + n * (lm + (w + u) + v))  # Eq. 3, alpha = gamma = delta = 1


def test_correlations_and_difficulty_marts(built: Paths) -> None:
    n = _q(built, "select count(*) from marts.mart_wild_correlations where domain = 'all'")[0][0]
    assert n == 9 * 9 + 4 * 4  # group A: 4 demographics + 5 terms; group B: 2 + 2
    rho = _q(
        built,
        "select spearman_rho from marts.mart_wild_correlations where domain = 'all' and "
        "condition = 'with_model' and variable_x = 'gpt3_familiarity' and variable_y = 'loss_mean'",
    )[0][0]
    assert -1 <= rho <= 1
    cells = _q(built, "select count(*), min(n_ratings), max(n_ratings) from marts.mart_wild_loss_by_difficulty")[0]
    assert cells == (24, 34, 36)
    texts = _q(
        built,
        "select condition, count(*), count(prompt_text), count(own_answer_text) "
        "from marts.mart_wild_texts group by 1 order by 1",
    )
    assert texts == [("with_model", 432, 432, 0), ("without_model", 408, 0, 408)]


class _FakeDbt:
    """What a dbt Python model sees of dbt: `ref(name).df()` of the given frames."""

    def __init__(self, frames):
        self.frames = frames

    def ref(self, name):
        frame = self.frames[name]
        return type("Rel", (), {"df": lambda _self: frame.copy()})()


def _load_model(name: str):
    import importlib.util

    path = DBT_PROJECT_DIR / "models" / "marts" / "wild" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.model


def test_correlations_keep_ties_whatever_the_row_order() -> None:
    """Two respondents whose per-domain losses are the same numbers in another order have the same mean loss,
    so Spearman ranks them as tied, whichever order the rows arrive in. The float sums differ in the last bit
    ((0.1 + 0.2) + 0.3 != (0.3 + 0.2) + 0.1); unrounded, the tie was broken by row order and rho moved by 0.006
    on the real data between two builds of the same rows."""
    import pandas as pd
    from scipy import stats

    assert (0.1 + 0.2) + 0.3 != (0.3 + 0.2) + 0.1
    losses = {
        "A1": [0.1, 0.2, 0.3],
        "A2": [0.3, 0.2, 0.1],
        "A3": [0.5, 0.5, 0.5],
        "A4": [0.0, 0.1, 0.2],
        "A5": [0.9, 0.8, 0.7],
    }
    ages = {"A1": 30, "A2": 20, "A3": 40, "A4": 25, "A5": 50}
    terms = pd.DataFrame(
        [
            {
                "respondent_id": r,
                "condition": "with_model",
                "domain": f"d{k}",
                "loss_mean": v,
                "devising_s": 1.0 + k,
                "wrapping_s": 2.0,
                "unwrapping_s": 3.0 + v,
                "validating_s": 4.0,
                "solving_s": None,
            }
            for r, vs in losses.items()
            for k, v in enumerate(vs)
        ]
    )
    resp = pd.DataFrame(
        [
            {"respondent_id": r, "age_years": a, "eng_level_code": 1, "gpt3_familiarity": 1, "assistants_code": 1}
            for r, a in ages.items()
        ]
    )
    model = _load_model("mart_wild_correlations")
    rho = []
    for frame in (terms, terms.iloc[::-1]):
        out = model(_FakeDbt({"int_wild_respondent_terms": frame, "stg_wild_respondents": resp}), None)
        row = out[(out["domain"] == "all") & (out["variable_x"] == "age_years") & (out["variable_y"] == "loss_mean")]
        rho.append(float(row["spearman_rho"].iloc[0]))
    expected = stats.spearmanr([ages[r] for r in losses], [0.2, 0.2, 0.5, 0.1, 0.8]).statistic  # exact ties
    assert rho[0] == rho[1] == pytest.approx(expected, abs=1e-15)
