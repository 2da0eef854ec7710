"""The README's headline findings, computed from a published snapshot, never typed by hand.

    python scripts/readme_findings.py --warehouse W            # print the findings block
    python scripts/readme_findings.py --warehouse W --write    # and write it into README.md
    python scripts/readme_findings.py --warehouse W --check    # exit 1 when README.md's block differs

Reads only `<W>/marts.duckdb` (attached read-only) and replaces only what lies between README.md's marker
comments `<!-- findings:start -->` and `<!-- findings:end -->`. Each finding is one line: `compute` gathers its
numbers from the marts (`None` where the snapshot has none), `render` writes them into the line's template
(`TEMPLATES`), leaving out a clause whose numbers are missing. tests/test_readme.py recomputes every number with
its own SQL and checks that README.md's block has the templates' form.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
START, END = "<!-- findings:start -->", "<!-- findings:end -->"
ALPHA = 0.05
#: mart_scoreboard_gaps.best_value_origin in words
ORIGINS = {
    "reported": "as the study's authors report",
    "scored": "scored here",
    "imported": "imported",
    "imported_words": "imported",
}
DEFAULT_MODEL = "smollm2-135m"  # ingest/scoring/model_table.py DEFAULT_MODEL (not imported: no torch here)
FEATURED = "natural_stories"  # ingest/corpora.toml's featured corpus
FEATURED_MEASURE = "spr"
XLANG_MEASURE = "gaze_duration"

#: one template per finding, in README order; a {field} is filled by render, [[...]] is a clause left out when
#: one of its fields is missing
TEMPLATES = {
    "top1": (
        "- **Guessing the next token.** In the top-1 game humans guess {humans_token} of next tokens right, "
        "{best_token} {best_token_value} ({best_token_origin}); of next whole words humans {humans_word}, "
        "{best_word} {best_word_value}[[, and the default model, {default_model}, {default_word} of the same "
        "questions]]."
    ),
    "pairwise": (
        "- **Which came next.** Humans' perplexity in the pairwise game is {humans} [{humans_low}, "
        "{humans_high}], {ratio} times that of the best model, {best} ({best_value}; 95% interval of the ratio "
        "{ratio_low} to {ratio_high})."
    ),
    "bits_per_byte": (
        "- **Bits per byte.** The default model, {default_model}, needs {featured_value} bits per "
        "byte on {featured}[[ ({best}: {best_value})]], {en_low} to {en_high} on the {n_en} English "
        "corpora[[ and {other_low} to {other_high} on the {n_other} in other languages]]."
    ),
    "delta_loglik": (
        "- **Surprisal and reading times.** On {corpus} ({measure}), a model's surprisal improves a "
        "regression of reading times over word length and frequency for {n_sig} of {n_models} models "
        "(p < 0.05), most for {best} ({best_value} × 10⁻² nats per word), least for {worst} "
        "({worst_value})[[; bigger is not better: {small} {small_value}, {large} {large_value}]]."
    ),
    "wt_vs_lw": (
        "- **Word surprisal, WT or LW.** Whitespace-trailing surprisal (Oh & Schuler 2024; Pimentel & "
        "Meister 2024) fits reading times significantly better than the usual leading-whitespace one in "
        "{n_wt} of {n} comparisons (corpus × measure × model, p < 0.05), worse in {n_lw}; on {corpus} "
        "in {n_sig_featured} of {n_featured} (WT ahead for {n_wt_ahead_featured})."
    ),
    "languages": (
        "- **Eleven languages.** Across MECO's {n_languages} languages, surprisal improves the fit of "
        "{measure}s for {best} in {best_above} of {best_n} languages ({best_mean} × 10⁻² nats per word on "
        "average)[[ and, with its WT surprisal, for {default_model} in {default_above} of {default_n} "
        "({default_mean})]]."
    ),
    "temperature": (
        "- **Temperature.** On {corpus} ({measure}), {model}'s surprisal fits reading times best from {direction}, "
        "T = {best} ({best_low} to {best_high}; Liu, Škrjanec & Demberg 2024): choosing T "
        "on other words gains {gain} [{gain_low}, {gain_high}] × 10⁻² nats per word over T = 1; over all {n} corpus "
        "× measure pairs it gains (interval above 0) in {n_gain}."
    ),
    "wild": (
        "- **Prompts in the wild.** People's answers (Casares et al. 2022; loss 0 best, 1 worst) were worse "
        "with GPT-3 than by hand in {n_worse} of {n_domains} task domains ({worse}), better in {n_better}, "
        "no different (Holm-adjusted p ≥ 0.05) in {n_tie}."
    ),
}


def connect(warehouse: Path) -> duckdb.DuckDBPyConnection:
    """An in-memory connection with the published snapshot attached read-only as `s` and in use."""
    snapshot = Path(warehouse) / "marts.duckdb"
    if not snapshot.is_file():
        raise SystemExit(f"error: {snapshot}: no published snapshot")
    con = duckdb.connect(":memory:")
    con.execute(f"ATTACH '{snapshot}' AS s (READ_ONLY)")
    con.execute("USE s")
    return con


def _rows(con, sql: str, params=()) -> list[dict]:
    cur = con.execute(sql, list(params))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def _has(con, table: str) -> bool:
    return bool(
        con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_catalog = 's' "
            "AND table_schema = 'main' AND table_name = ?",
            [table],
        ).fetchone()[0]
    )


def _display_name(con, predictor: str) -> str:
    row = con.execute(
        "SELECT any_value(display_name) FROM mart_scoreboard_long WHERE predictor = ?", [predictor]
    ).fetchone()
    return row[0] if row and row[0] else predictor


def top1(con) -> dict | None:
    gaps = {
        r["comparison"]: r
        for r in _rows(
            con, "SELECT * FROM mart_scoreboard_gaps WHERE comparison IN ('top1_accuracy_token', 'top1_accuracy_word')"
        )
    }
    if set(gaps) != {"top1_accuracy_token", "top1_accuracy_word"}:
        return None
    tok, word = gaps["top1_accuracy_token"], gaps["top1_accuracy_word"]
    default = con.execute(
        "SELECT value FROM mart_scoreboard_long WHERE predictor = ? AND comparison = "
        "'top1_accuracy_word' AND value IS NOT NULL",
        [DEFAULT_MODEL],
    ).fetchone()
    return {
        "humans_token": tok["humans_value"],
        "best_token": tok["best_display_name"],
        "best_token_value": tok["best_value"],
        "best_token_origin": ORIGINS.get(tok["best_value_origin"]),
        "humans_word": word["humans_value"],
        "best_word": word["best_display_name"],
        "best_word_value": word["best_value"],
        "default_model": _display_name(con, DEFAULT_MODEL) if default else None,
        "default_word": default[0] if default else None,
    }


def pairwise(con) -> dict | None:
    rows = _rows(con, "SELECT * FROM mart_scoreboard_gaps WHERE comparison = 'pairwise_perplexity'")
    if not rows:
        return None
    g = rows[0]
    return {
        "humans": g["humans_value"],
        "humans_low": g["humans_ci_low"],
        "humans_high": g["humans_ci_high"],
        "best": g["best_display_name"],
        "best_value": g["best_value"],
        "ratio": g["gap"],
        "ratio_low": g["gap_ci_low"],
        "ratio_high": g["gap_ci_high"],
    }


def bits_per_byte(con) -> dict | None:
    rows = _rows(
        con,
        "SELECT p.corpus, c.title, c.language, p.bits_per_byte FROM mart_model_perplexity AS p "
        "JOIN mart_corpora AS c USING (corpus) WHERE p.model_key = ? AND p.source = 'scored'",
        [DEFAULT_MODEL],
    )
    if not rows:
        return None
    by_corpus = {r["corpus"]: r for r in rows}
    en = [r["bits_per_byte"] for r in rows if r["language"] == "en"]
    other = [r["bits_per_byte"] for r in rows if r["language"] != "en"]
    featured = by_corpus.get(FEATURED)
    best = _rows(
        con,
        "SELECT model_key, bits_per_byte FROM mart_model_perplexity WHERE corpus = ? AND model_key "
        "<> ? ORDER BY bits_per_byte, model_key LIMIT 1",
        [FEATURED, DEFAULT_MODEL],
    )
    return {
        "default_model": _display_name(con, DEFAULT_MODEL),
        "featured": featured["title"] if featured else None,
        "featured_value": featured["bits_per_byte"] if featured else None,
        "best": _display_name(con, best[0]["model_key"]) if best and featured else None,
        "best_value": best[0]["bits_per_byte"] if best and featured else None,
        "n_en": len(en),
        "en_low": min(en, default=None),
        "en_high": max(en, default=None),
        "n_other": len(other) or None,
        "other_low": min(other, default=None),
        "other_high": max(other, default=None),
    }


def _runs_on(con, corpus: str, measure: str) -> list[dict]:
    """Each run's cross-validated ΔLL on (corpus, measure), its WT row where it has one, else its LW row (a run
    with leading-whitespace surprisal only), as the Reading times page shows them."""
    return _rows(
        con,
        """
        SELECT run_id, coalesce(model_name, model_key) AS model, model_family, n_parameters,
               delta_loglik_nats_per_row AS dll, p_value
        FROM mart_delta_loglik
        WHERE corpus = ? AND measure = ? AND method = 'cv_means' AND status = 'ok'
        QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY definition = 'wt' DESC) = 1
        ORDER BY dll DESC, model""",
        [corpus, measure],
    )


def delta_loglik(con) -> dict | None:
    runs = _runs_on(con, FEATURED, FEATURED_MEASURE)
    if not runs:
        return None
    best, worst = runs[0], runs[-1]
    families: dict[str, list[dict]] = {}
    for r in runs:
        if r["model_family"] and r["n_parameters"]:
            families.setdefault(r["model_family"], []).append(r)
    biggest = max(families.values(), key=lambda f: (len(f), -min(r["n_parameters"] for r in f)), default=[])
    small = min(biggest, key=lambda r: r["n_parameters"]) if len(biggest) > 1 else None
    large = max(biggest, key=lambda r: r["n_parameters"]) if len(biggest) > 1 else None
    worse = small is not None and large["dll"] < small["dll"]
    title = con.execute("SELECT title FROM mart_corpora WHERE corpus = ?", [FEATURED]).fetchone()
    return {
        "corpus": title[0] if title else FEATURED,
        "measure": "self-paced reading",
        "n_sig": sum(r["p_value"] is not None and r["p_value"] < ALPHA for r in runs),
        "n_models": len(runs),
        "best": best["model"],
        "best_value": best["dll"],
        "worst": worst["model"],
        "worst_value": worst["dll"],
        "small": small["model"] if worse else None,
        "small_value": small["dll"] if worse else None,
        "large": large["model"] if worse else None,
        "large_value": large["dll"] if worse else None,
    }


def wt_vs_lw(con) -> dict | None:
    rows = _rows(
        con,
        "SELECT corpus, p_value, wt_fits_better FROM mart_delta_loglik_wt_vs_lw "
        "WHERE method = 'cv_means' AND p_value IS NOT NULL",
    )
    if not rows:
        return None
    sig = [r for r in rows if r["p_value"] < ALPHA]
    featured = [r for r in rows if r["corpus"] == FEATURED]
    title = con.execute("SELECT title FROM mart_corpora WHERE corpus = ?", [FEATURED]).fetchone()
    return {
        "n": len(rows),
        "n_wt": sum(bool(r["wt_fits_better"]) for r in sig),
        "n_lw": sum(not r["wt_fits_better"] for r in sig),
        "corpus": title[0] if title else FEATURED,
        "n_featured": len(featured),
        "n_sig_featured": sum(r["p_value"] < ALPHA for r in featured),
        "n_wt_ahead_featured": sum(bool(r["wt_fits_better"]) for r in featured),
    }


def languages(con) -> dict | None:
    rows = _rows(
        con,
        """
        SELECT model_key, coalesce(model_name, model_key) AS model, n_languages, n_above_zero,
               mean_delta_loglik_nats_per_word AS mean_dll
        FROM mart_xlang_model_summary
        WHERE measure = ? AND comparison = 'surprisal' AND definition IN ('as given', 'wt')
        ORDER BY n_above_zero DESC, mean_dll DESC, model""",
        [XLANG_MEASURE],
    )
    if not rows:
        return None
    best = rows[0]
    default = next((r for r in rows if r["model_key"] == DEFAULT_MODEL and r is not best), None)
    n_lang = con.execute(
        "SELECT count(DISTINCT corpus) FROM mart_xlang_delta_loglik WHERE measure = ?", [XLANG_MEASURE]
    ).fetchone()[0]
    return {
        "n_languages": n_lang,
        "measure": "gaze duration",
        "best": best["model"],
        "best_above": best["n_above_zero"],
        "best_n": best["n_languages"],
        "best_mean": best["mean_dll"],
        "default_model": default["model"] if default else None,
        "default_above": default["n_above_zero"] if default else None,
        "default_n": default["n_languages"] if default else None,
        "default_mean": default["mean_dll"] if default else None,
    }


def direction(t: float) -> str:
    """Where a best temperature T lies, in words."""
    return (
        "a flatter distribution than its own"
        if t > 1
        else "a sharper distribution than its own"
        if t < 1
        else ("its own distribution")
    )


def temperature(con) -> dict | None:
    """The featured corpus's best T for the default model (else the first model by key), and how many pairs gain."""
    rows = _rows(
        con,
        """
        SELECT corpus, model_key, best_temperature, best_temperature_ci_low, best_temperature_ci_high,
               cv_gain_nats_per_word, cv_gain_ci_low_nats_per_word, cv_gain_ci_high_nats_per_word
        FROM mart_temperature_delta_loglik WHERE is_best ORDER BY model_key <> ?, model_key, corpus, measure""",
        [DEFAULT_MODEL],
    )
    featured = [r for r in rows if r["corpus"] == FEATURED]
    if not featured:
        return None
    f = featured[0]
    mine = [r for r in rows if r["model_key"] == f["model_key"]]
    title = con.execute("SELECT title FROM mart_corpora WHERE corpus = ?", [FEATURED]).fetchone()
    return {
        "corpus": title[0] if title else FEATURED,
        "measure": "self-paced reading",
        "model": _display_name(con, f["model_key"]),
        "direction": direction(f["best_temperature"]),
        "best": f["best_temperature"],
        "best_low": f["best_temperature_ci_low"],
        "best_high": f["best_temperature_ci_high"],
        "gain": f["cv_gain_nats_per_word"],
        "gain_low": f["cv_gain_ci_low_nats_per_word"],
        "gain_high": f["cv_gain_ci_high_nats_per_word"],
        "n": len(mine),
        "n_gain": sum(r["cv_gain_ci_low_nats_per_word"] > 0 for r in mine),
    }


def wild(con) -> dict | None:
    rows = _rows(
        con,
        """
        SELECT domain, any_value(domain_order) AS domain_order,
               any_value(loss_mean) FILTER (WHERE condition = 'with_model') AS with_model,
               any_value(loss_mean) FILTER (WHERE condition = 'without_model') AS by_hand,
               any_value(p_value_two_sided_holm) FILTER (WHERE condition = 'with_model') AS p
        FROM mart_wild_loss GROUP BY domain ORDER BY domain_order""",
    )
    rows = [r for r in rows if r["with_model"] is not None and r["by_hand"] is not None]
    if not rows:
        return None
    clear = [r for r in rows if r["p"] is not None and r["p"] < ALPHA]
    worse = [r for r in clear if r["with_model"] > r["by_hand"]]
    return {
        "n_domains": len(rows),
        "n_worse": len(worse),
        "n_better": len(clear) - len(worse),
        "n_tie": len(rows) - len(clear),
        "worse": [(r["domain"], r["with_model"], r["by_hand"]) for r in worse] or None,
    }


FINDINGS = {
    "top1": top1,
    "pairwise": pairwise,
    "bits_per_byte": bits_per_byte,
    "delta_loglik": delta_loglik,
    "wt_vs_lw": wt_vs_lw,
    "languages": languages,
    "temperature": temperature,
    "wild": wild,
}
#: the marts each finding reads: a snapshot without one of them has no such finding
READS = {
    "top1": ("mart_scoreboard_gaps", "mart_scoreboard_long"),
    "pairwise": ("mart_scoreboard_gaps",),
    "bits_per_byte": ("mart_model_perplexity", "mart_corpora", "mart_scoreboard_long"),
    "delta_loglik": ("mart_delta_loglik", "mart_corpora"),
    "wt_vs_lw": ("mart_delta_loglik_wt_vs_lw",),
    "languages": ("mart_xlang_model_summary", "mart_xlang_delta_loglik"),
    "temperature": ("mart_temperature_delta_loglik", "mart_corpora", "mart_scoreboard_long"),
    "wild": ("mart_wild_loss",),
}


def compute(con) -> dict[str, dict | None]:
    """Every finding's numbers (None: the snapshot has none for it)."""
    return {key: (fn(con) if all(_has(con, t) for t in READS[key]) else None) for key, fn in FINDINGS.items()}


# ------------------------------------------------------------------ formatting


def percent(v: float) -> str:
    return f"{100 * v:.1f}%"


def x100(v: float) -> str:
    return f"{100 * v:.2f}"


def three(v: float) -> str:
    return f"{v:.3g}" if abs(v) >= 100 else f"{v:.1f}"


FORMATS = {
    "top1": {
        "humans_token": percent,
        "best_token_value": percent,
        "humans_word": percent,
        "best_word_value": percent,
        "default_word": percent,
    },
    "pairwise": {
        "humans": three,
        "humans_low": three,
        "humans_high": three,
        "best_value": three,
        "ratio": "{:.1f}".format,
        "ratio_low": "{:.1f}".format,
        "ratio_high": "{:.1f}".format,
    },
    "bits_per_byte": {
        k: "{:.2f}".format for k in ("featured_value", "best_value", "en_low", "en_high", "other_low", "other_high")
    },
    "delta_loglik": {k: x100 for k in ("best_value", "worst_value", "small_value", "large_value")},
    "languages": {"best_mean": x100, "default_mean": x100},
    "temperature": {
        **{k: "{:g}".format for k in ("best", "best_low", "best_high")},
        "gain": lambda v: f"{100 * v:+.2f}",
        "gain_low": x100,
        "gain_high": x100,
    },
    "wild": {"worse": lambda ws: ", ".join(f"{d} {a:.2f} vs {b:.2f}" for d, a, b in ws)},
}


def _fill(text: str, values: dict) -> str | None:
    import re

    fields = re.findall(r"\{(\w+)\}", text)
    if any(values.get(f) is None for f in fields):
        return None
    return text.format(**{f: values[f] for f in fields})


def render(key: str, numbers: dict | None) -> str:
    """One finding's line: its template filled with its formatted numbers, a clause without its numbers left out;
    a finding the snapshot has no numbers for says so."""
    import re

    template = TEMPLATES[key]
    label = re.match(r"- \*\*[^*]+\*\*", template).group(0)
    if numbers is None:
        return f"{label} Not in this snapshot."
    fmt = FORMATS.get(key, {})
    values = {k: (fmt[k](v) if k in fmt and v is not None else v) for k, v in numbers.items()}
    parts = re.split(r"\[\[(.*?)\]\]", template)  # even: always there; odd: optional clauses
    out = []
    for i, part in enumerate(parts):
        filled = _fill(part, values)
        if filled is None and i % 2 == 0:
            return f"{label} Not in this snapshot."
        out.append(filled or "")
    return "".join(out)


def block(numbers: dict[str, dict | None]) -> str:
    return "\n".join([START, *(render(k, numbers[k]) for k in TEMPLATES), END])


def readme_block(text: str) -> str:
    """README.md's block, markers included."""
    start, end = text.index(START), text.index(END) + len(END)
    return text[start:end]


def replace_block(text: str, new: str) -> str:
    return text.replace(readme_block(text), new)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--warehouse", type=Path, required=True, help="the warehouse whose marts.duckdb is read")
    ap.add_argument("--readme", type=Path, default=README)
    ap.add_argument("--write", action="store_true", help="write the block into the README")
    ap.add_argument("--check", action="store_true", help="exit 1 when the README's block differs")
    args = ap.parse_args(argv)
    with connect(args.warehouse) as con:
        new = block(compute(con))
    print(new)
    text = args.readme.read_text(encoding="utf-8")
    if args.check and readme_block(text) != new:
        print(f"{args.readme}: its findings block differs from the snapshot's", file=sys.stderr)
        return 1
    if args.write:
        args.readme.write_text(replace_block(text, new), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
