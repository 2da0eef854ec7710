"""The README and the guides: short, every link resolves, and the headline findings are the snapshot's.

The findings block of README.md is written by scripts/readme_findings.py from a published snapshot; here its
numbers are recomputed from the session's refreshed warehouse with SQL of the test's own, and README.md's block is
checked to have the script's form (its numbers come from the full warehouse of `make up` and `refresh`).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
#: the documentation this README's authors write (the other docs pages have their own owners and tests)
GUIDES = [
    DOCS / "getting-started.md",
    DOCS / "architecture.md",
    *(
        DOCS / "guides" / f"{g}.md"
        for g in ("own-corpus", "own-model", "shipped-corpus", "scheduling", "sql", "operations", "scale")
    ),
]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def load_script():
    spec = importlib.util.spec_from_file_location("readme_findings", ROOT / "scripts" / "readme_findings.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


rf = load_script()


def local_links(path: Path) -> list[str]:
    """The link targets of a Markdown file that are not web addresses or in-page anchors, anchors cut off."""
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL)  # code blocks hold no links
    return [t.split("#", 1)[0] for t in LINK.findall(text) if not re.match(r"[a-z]+:", t) and not t.startswith("#")]


# ------------------------------------------------------------------ the README and the guides as files


def test_readme_is_at_most_150_lines():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 150


def test_every_readme_link_resolves_to_a_file():
    links = local_links(README)
    assert links, "the README links into the documentation"
    missing = [t for t in links if not (ROOT / t).exists()]
    assert not missing, f"README.md links to missing files: {missing}"
    for page in (
        "docs/index.md",
        "docs/getting-started.md",
        "docs/reference/cli.md",
        "docs/reference/marts.md",
        "docs/methods/index.md",
        "CHANGELOG.md",
        "CONTRIBUTING.md",
        "LICENSE",
        "docs/pages/scoreboard.png",
        *(str(g.relative_to(ROOT)) for g in GUIDES if g.parent.name == "guides"),
    ):
        assert page in links, f"the README links to {page}"


@pytest.mark.parametrize("page", GUIDES, ids=lambda p: p.name)
def test_guide_links_resolve_inside_docs(page):
    """A link between docs pages resolves, and none leaves docs/ (mkdocs --strict refuses those)."""
    assert page.exists(), page
    for target in local_links(page):
        resolved = (page.parent / target).resolve()
        assert resolved.exists(), f"{page.name}: {target} does not exist"
        assert resolved.is_relative_to(DOCS.resolve()), f"{page.name}: {target} is outside docs/"


@pytest.mark.parametrize("page", [README, *GUIDES], ids=lambda p: p.name)
def test_no_issue_numbers_or_paper_keys(page):
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"\bissues? \d+", text, re.IGNORECASE), f"{page.name} names an issue by its number"
    assert not re.search(r"\bpapers? 00\d", text, re.IGNORECASE), f"{page.name} cites a paper by its key"


def test_the_own_corpus_guide_lists_the_export_columns():
    """The own-corpus guide's `export words` paragraph names exactly the columns predictabase.export writes."""
    from predictabase import export

    text = (DOCS / "guides" / "own-corpus.md").read_text(encoding="utf-8")
    para = text[text.index("**`export words`**") :]
    para = para[: para.index("\n\n")]
    named = re.findall(r"`([a-z_<>]+)`", para)
    words = [c for c in named if c in export.WORD_COLUMNS]
    assert [c for c in export.WORD_COLUMNS if not c.startswith("mean_rt_")] == words
    assert "mean_rt_<measure>_ms" in named
    assert [c.lstrip("_") for c in re.findall(r"`(?:<model>)?__([a-z_]+)`", para)] == export.MODEL_COLUMNS


# ------------------------------------------------------------------ the findings block


def test_readme_block_has_the_form_of_the_script():
    """README.md's findings block: the markers, and one line per template in order, each matching the template
    with every {field} standing for some text (the committed numbers are the full warehouse's)."""
    lines = rf.readme_block(README.read_text(encoding="utf-8")).splitlines()
    assert lines[0] == rf.START and lines[-1] == rf.END
    body = lines[1:-1]
    assert len(body) == len(rf.TEMPLATES)
    for line, (key, template) in zip(body, rf.TEMPLATES.items()):
        full = template.replace("[[", "").replace("]]", "")
        pattern = "".join(
            ".+?" if re.fullmatch(r"\{\w+\}", part) else re.escape(part) for part in re.split(r"(\{\w+\})", full)
        )
        assert re.fullmatch(pattern, line), f"README's '{key}' line does not have the script's form:\n{line}"
        assert not re.search(r"\b(nan|None)\b", line), line


@pytest.fixture(scope="module")
def snapshot(refreshed):
    assert refreshed.result.returncode == 0, refreshed.result.stderr[-3000:]
    with rf.connect(refreshed.paths.warehouse) as con:
        yield con


def one(con, sql: str, params=()):
    row = con.execute(sql, list(params)).fetchone()
    return row if row is None or len(row) > 1 else row[0]


def name(con, predictor: str) -> str:
    return one(con, "SELECT min(display_name) FROM mart_scoreboard_long WHERE predictor = ?", [predictor])


def best_other(con, comparison: str, higher: bool):
    """The predictor other than humans with the best value of a comparison, by the scoreboard's long table."""
    return one(
        con,
        f"""SELECT predictor, value, value_origin FROM mart_scoreboard_long
                        WHERE comparison = ? AND predictor <> 'humans' AND value IS NOT NULL
                        ORDER BY value {"DESC" if higher else "ASC"} LIMIT 1""",
        [comparison],
    )


def humans(con, comparison: str):
    return one(
        con,
        "SELECT value, ci_low, ci_high FROM mart_scoreboard_long WHERE predictor = 'humans' AND comparison = ?",
        [comparison],
    )


def expected_top1(con):
    tok, word = humans(con, "top1_accuracy_token"), humans(con, "top1_accuracy_word")
    if tok is None or word is None or tok[0] is None or word[0] is None:
        return None
    bt, bw = best_other(con, "top1_accuracy_token", True), best_other(con, "top1_accuracy_word", True)
    default = one(
        con,
        "SELECT value FROM mart_scoreboard_long WHERE predictor = ? AND comparison = 'top1_accuracy_word'",
        [rf.DEFAULT_MODEL],
    )
    return {
        "humans_token": tok[0],
        "best_token": name(con, bt[0]),
        "best_token_value": bt[1],
        "best_token_origin": rf.ORIGINS.get(bt[2]),
        "humans_word": word[0],
        "best_word": name(con, bw[0]),
        "best_word_value": bw[1],
        "default_model": name(con, rf.DEFAULT_MODEL) if default is not None else None,
        "default_word": default,
    }


def expected_pairwise(con):
    h = humans(con, "pairwise_perplexity")
    if h is None or h[0] is None:
        return None
    best = best_other(con, "pairwise_perplexity", False)
    ci = one(con, "SELECT gap_ci_low, gap_ci_high FROM mart_scoreboard_gaps WHERE comparison = 'pairwise_perplexity'")
    return {
        "humans": h[0],
        "humans_low": h[1],
        "humans_high": h[2],
        "best": name(con, best[0]),
        "best_value": best[1],
        "ratio": h[0] / best[1],
        "ratio_low": ci[0],
        "ratio_high": ci[1],
    }


def expected_bits_per_byte(con):
    rows = con.execute(
        """SELECT m.language = 'en' AS en, p.corpus, m.title, p.bits_per_byte
                          FROM mart_model_perplexity p, mart_corpora m
                          WHERE p.corpus = m.corpus AND p.model_key = ? AND p.source = 'scored'""",
        [rf.DEFAULT_MODEL],
    ).fetchall()
    if not rows:
        return None
    en = [r[3] for r in rows if r[0]]
    other = [r[3] for r in rows if not r[0]]
    featured = next((r for r in rows if r[1] == rf.FEATURED), None)
    best = one(
        con,
        "SELECT arg_min(model_key, bits_per_byte), min(bits_per_byte) FROM mart_model_perplexity "
        "WHERE corpus = ? AND model_key <> ?",
        [rf.FEATURED, rf.DEFAULT_MODEL],
    )
    has_best = featured is not None and best[0] is not None
    return {
        "default_model": name(con, rf.DEFAULT_MODEL),
        "featured": featured[2] if featured else None,
        "featured_value": featured[3] if featured else None,
        "best": name(con, best[0]) if has_best else None,
        "best_value": best[1] if has_best else None,
        "n_en": len(en),
        "en_low": min(en, default=None),
        "en_high": max(en, default=None),
        "n_other": len(other) or None,
        "other_low": min(other, default=None),
        "other_high": max(other, default=None),
    }


def expected_delta_loglik(con):
    # each run's WT row, or its LW row when it has no WT row
    rows = con.execute(
        """
        WITH r AS (SELECT * FROM mart_delta_loglik WHERE corpus = ? AND measure = ? AND method = 'cv_means'
                   AND status = 'ok')
        SELECT coalesce(model_name, model_key), model_family, n_parameters, delta_loglik_nats_per_row, p_value
        FROM r WHERE definition = 'wt' OR run_id NOT IN (SELECT run_id FROM r WHERE definition = 'wt')""",
        [rf.FEATURED, rf.FEATURED_MEASURE],
    ).fetchall()
    if not rows:
        return None
    rows.sort(key=lambda r: (-r[3], r[0]))
    families = {}
    for r in rows:
        if r[1] and r[2]:
            families.setdefault(r[1], []).append(r)
    fam = sorted(families.values(), key=lambda f: (-len(f), min(r[2] for r in f)))
    small = large = None
    if fam and len(fam[0]) > 1:
        small, large = min(fam[0], key=lambda r: r[2]), max(fam[0], key=lambda r: r[2])
        if large[3] >= small[3]:
            small = large = None
    return {
        "corpus": one(con, "SELECT title FROM mart_corpora WHERE corpus = ?", [rf.FEATURED]),
        "measure": "self-paced reading",
        "n_sig": sum(r[4] is not None and r[4] < 0.05 for r in rows),
        "n_models": len(rows),
        "best": rows[0][0],
        "best_value": rows[0][3],
        "worst": rows[-1][0],
        "worst_value": rows[-1][3],
        "small": small and small[0],
        "small_value": small and small[3],
        "large": large and large[0],
        "large_value": large and large[3],
    }


def expected_wt_vs_lw(con):
    n, n_wt, n_lw, n_f, n_sig_f, n_ahead_f = one(
        con,
        """
        SELECT count(*), count(*) FILTER (WHERE p_value < 0.05 AND wt_fits_better),
               count(*) FILTER (WHERE p_value < 0.05 AND NOT wt_fits_better),
               count(*) FILTER (WHERE corpus = $1), count(*) FILTER (WHERE corpus = $1 AND p_value < 0.05),
               count(*) FILTER (WHERE corpus = $1 AND wt_fits_better)
        FROM mart_delta_loglik_wt_vs_lw WHERE method = 'cv_means' AND p_value IS NOT NULL""",
        [rf.FEATURED],
    )
    if not n:
        return None
    return {
        "n": n,
        "n_wt": n_wt,
        "n_lw": n_lw,
        "corpus": one(con, "SELECT title FROM mart_corpora WHERE corpus = ?", [rf.FEATURED]),
        "n_featured": n_f,
        "n_sig_featured": n_sig_f,
        "n_wt_ahead_featured": n_ahead_f,
    }


def expected_languages(con):
    rows = con.execute(
        """SELECT model_key, coalesce(model_name, model_key), n_languages, n_above_zero,
                                 mean_delta_loglik_nats_per_word
                          FROM mart_xlang_model_summary WHERE measure = ? AND comparison = 'surprisal'
                          AND definition <> 'lw'""",
        [rf.XLANG_MEASURE],
    ).fetchall()
    if not rows:
        return None
    rows.sort(key=lambda r: (-r[3], -r[4], r[1]))
    best = rows[0]
    default = next((r for r in rows[1:] if r[0] == rf.DEFAULT_MODEL), None)
    return {
        "n_languages": one(
            con, "SELECT count(DISTINCT language) FROM mart_xlang_delta_loglik WHERE measure = ?", [rf.XLANG_MEASURE]
        ),
        "measure": "gaze duration",
        "best": best[1],
        "best_above": best[3],
        "best_n": best[2],
        "best_mean": best[4],
        "default_model": default and default[1],
        "default_above": default and default[3],
        "default_n": default and default[2],
        "default_mean": default and default[4],
    }


def expected_temperature(con):
    models = [
        r[0]
        for r in con.execute(
            "SELECT DISTINCT model_key FROM mart_temperature_delta_loglik WHERE corpus = ? ORDER BY model_key",
            [rf.FEATURED],
        ).fetchall()
    ]
    if not models:
        return None
    model = rf.DEFAULT_MODEL if rf.DEFAULT_MODEL in models else models[0]
    # the best T of the featured corpus's self-paced reading: the T of the largest ΔLL, recomputed from the curve
    curve = con.execute(
        "SELECT temperature, delta_loglik_nats_per_word, best_temperature_ci_low, best_temperature_ci_high, "
        "cv_gain_nats_per_word, cv_gain_ci_low_nats_per_word, cv_gain_ci_high_nats_per_word "
        "FROM mart_temperature_delta_loglik WHERE corpus = ? AND model_key = ? ORDER BY temperature",
        [rf.FEATURED, model],
    ).fetchall()
    best = max(curve, key=lambda r: (r[1], -r[0]))
    n, n_gain = one(
        con,
        "SELECT count(DISTINCT (corpus, measure)), count(DISTINCT (corpus, measure)) FILTER "
        "(WHERE cv_gain_ci_low_nats_per_word > 0) FROM mart_temperature_delta_loglik WHERE model_key = ?",
        [model],
    )
    return {
        "corpus": one(con, "SELECT title FROM mart_corpora WHERE corpus = ?", [rf.FEATURED]),
        "measure": "self-paced reading",
        "model": name(con, model),
        "direction": {True: "a flatter distribution than its own", False: "a sharper distribution than its own"}.get(
            best[0] > 1 if best[0] != 1 else None, "its own distribution"
        ),
        "best": best[0],
        "best_low": best[2],
        "best_high": best[3],
        "gain": best[4],
        "gain_low": best[5],
        "gain_high": best[6],
        "n": n,
        "n_gain": n_gain,
    }


def expected_wild(con):
    w = con.execute("""SELECT a.domain, a.loss_mean, b.loss_mean, a.p_value_two_sided_holm
                       FROM mart_wild_loss a JOIN mart_wild_loss b ON a.domain = b.domain
                       AND a.condition = 'with_model' AND b.condition = 'without_model'
                       ORDER BY a.domain_order""").fetchall()
    if not w:
        return None
    worse = [(d, a, b) for d, a, b, p in w if p < 0.05 and a > b]
    better = [d for d, a, b, p in w if p < 0.05 and a < b]
    return {
        "n_domains": len(w),
        "n_worse": len(worse),
        "n_better": len(better),
        "n_tie": len(w) - len(worse) - len(better),
        "worse": worse or None,
    }


def assert_same(got, expected, where: str) -> None:
    """Equal, floats to 1e-12 relative (the test's sums may run in another order), nested lists and tuples too."""
    if isinstance(expected, dict) and isinstance(got, dict):
        assert sorted(got) == sorted(expected), where
        for k in expected:
            assert_same(got[k], expected[k], f"{where}.{k}")
    elif isinstance(expected, (list, tuple)) and isinstance(got, (list, tuple)):
        assert len(got) == len(expected), where
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same(g, e, f"{where}[{i}]")
    elif isinstance(expected, float) and not isinstance(got, bool):
        assert got == pytest.approx(expected, rel=1e-12), where
    else:
        assert got == expected, where


EXPECTED = {
    "top1": expected_top1,
    "pairwise": expected_pairwise,
    "bits_per_byte": expected_bits_per_byte,
    "delta_loglik": expected_delta_loglik,
    "wt_vs_lw": expected_wt_vs_lw,
    "languages": expected_languages,
    "temperature": expected_temperature,
    "wild": expected_wild,
}


def test_the_findings_are_the_snapshot_numbers(snapshot):
    """Every number of every finding equals the test's own SQL on the refreshed warehouse's snapshot, and the
    block the script prints is those numbers in its templates."""
    got = rf.compute(snapshot)
    assert list(got) == list(rf.TEMPLATES) == list(EXPECTED)
    for key, expect in EXPECTED.items():
        assert_same(got[key], expect(snapshot), key)
    assert got["pairwise"] is not None and got["delta_loglik"] is not None, "the refreshed warehouse has them"
    block = rf.block(got).splitlines()
    assert block[0] == rf.START and block[-1] == rf.END and len(block) == len(rf.TEMPLATES) + 2
    for line in block[1:-1]:
        assert "{" not in line and "[[" not in line and not re.search(r"\b(nan|None)\b", line), line


def test_the_script_writes_only_between_its_markers(refreshed, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"before\n{rf.START}\nold\n{rf.END}\nafter\n", encoding="utf-8")
    assert rf.main(["--warehouse", str(refreshed.paths.warehouse), "--readme", str(readme), "--check"]) == 1
    assert rf.main(["--warehouse", str(refreshed.paths.warehouse), "--readme", str(readme), "--write"]) == 0
    text = readme.read_text(encoding="utf-8")
    assert text.startswith(f"before\n{rf.START}\n") and text.endswith(f"{rf.END}\nafter\n")
    assert rf.main(["--warehouse", str(refreshed.paths.warehouse), "--readme", str(readme), "--check"]) == 0
