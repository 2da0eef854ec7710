"""The shape of the link between surprisal and reading time: a linear surprisal term against a smooth
one, each over a smooth frequency x length baseline, as Wilcox, Pimentel, Meister, Cotterell & Levy (2023)
compare them (xlang-processing analysis/analysis_link.Rmd), fitted with mgcv through
`Rscript predictabase/stats/fit_gam_link.R` (its header gives the three formulas). One row per (corpus, measure,
run, definition, predictors).

Sets of rows (one regression problem each; per-word means, a set's rows in the order its 10 folds are cut):
  - MECO, their rows (`predictors` = 'wilcox_2023'): each language x their four models, gaze duration (the one
    measure of their link analysis), the rows with freq, prev_freq, prev2_freq > 0 and finite, in file order, no
    other row dropped before the folds are cut (their script has no drop_na here: a row with a missing value
    is left out of each fit and has no held-out density);
  - MECO with our models (`predictors` = 'wilcox_2023' too: their freq, len and means, our surprisal, WT);
  - the other reading corpora (`predictors` = 'ours'): the word means of int_reading_word_means (gaze duration
    where the corpus has eye tracking, else self-paced reading), our word length, freq = unigram surprisal in
    bits from wordfreq's Zipf frequency, (9 - zipf) * log2(10), the same > 0 filter, texts in order; every
    scored run (WT) and the imported GPT-2 runs (WT where given, else LW), so GPT-2 small is on every corpus.
Per set, from the held-out log densities R returns (nats): ΔLL_linear = ll(linear) - ll(baseline) and ΔLL_GAM =
ll(GAM) - ll(baseline) per word; their comparison: the words where both exist, less the words whose
ΔLL_linear - ΔLL_GAM exceeds in absolute value its mean + 3 sd (their outlier rule, as written); means with
mean ± 1.96 SE (SE = sd / sqrt(n)), and the GAM's gain over the linear model, ΔLL_GAM - ΔLL_linear, with its
interval and a seeded paired sign-flip p-value (theirs, jmuOutlier's perm.test with `paried = T`, a misspelt
argument that leaves the test unpaired, is not replayed). The curves (lists over 0, 0.1, ..., 20 bits): the
surprisal term's effect in ms relative to 0 bits, with its standard error, for both links, from one fit on all
rows; surprisal_p01_bits / surprisal_p99_bits say where the set's words are.

R is slow next to numpy (about 1.7 CPU-seconds a set of 2,000 words), so the fits run only when var `gam` is
true (`predictabase all`, `predictabase build --gam`), or names the set's corpus (`--vars '{gam: "meco_en,provo"}'`),
and Rscript is found; a set whose input (its rows, sha256,
and the R script) is unchanged keeps the last fit in every build, so a rebuild fits only what changed, and
a set with no fit says why (status) and has no numbers.
"""

import hashlib
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from predictabase.ingest.corpus_declarations import DEFAULT_MEASURES
from predictabase.ingest.datasets.meco import LINK_MEASURE
from predictabase.stats import reading_regression as rr
from predictabase.stats.xlang_design import (
    MEASURE_SUFFIX,
    frequency_filter,
    measure_columns,
    our_surprisal_words,
    our_words,
    scored_runs,
)

SCRIPT = Path(rr.__file__).with_name("fit_gam_link.R")
R_COLUMNS = ["rt", "freq", "len", "prev_freq", "prev_len", "surp", "prev_surp"]
BASELINE = ["rt", "freq", "len", "prev_freq", "prev_len"]  # the same rows here: one baseline fit (the R script)
THEIRS = {
    "rt": f"{LINK_MEASURE}{MEASURE_SUFFIX}",  # their link analysis's measure (gaze_rt), as the MECO adapter names it
    "freq": "unigram_surprisal_bits",
    "len": "length_chars",
    "prev_freq": "prev1_unigram_surprisal_bits",
    "prev_len": "prev1_length_chars",
    "surp": "surprisal_bits",
    "prev_surp": "prev1_surprisal_bits",
}
#: their link analysis models gaze duration (their gaze_rt), our column <measure>_ms
WILCOX_MEASURE = LINK_MEASURE
LOG2_10 = float(np.log2(10.0))
LN2 = float(np.log(2.0))
STATS = (
    "delta_loglik_nats_per_word",
    "delta_loglik_se_nats_per_word",
    "delta_loglik_ci_low_nats_per_word",
    "delta_loglik_ci_high_nats_per_word",
)
LINKS = ("linear", "gam", "gam_minus_linear")
COLUMNS = (
    [
        "corpus",
        "measure",
        "model_key",
        "run_id",
        "run_source",
        "definition",
        "predictors",
        "status",
        "input_sha256",
        "n_rows",
        "n_words",
        "n_outlier_words",
    ]
    + [f"{link}_{s}" for link in LINKS for s in STATS]
    + [
        "gam_minus_linear_p_value",
        "gam_surprisal_edf",
        "surprisal_p01_bits",
        "surprisal_p99_bits",
        "curve_surprisal_bits",
        "linear_effect_ms",
        "linear_effect_se_ms",
        "gam_effect_ms",
        "gam_effect_se_ms",
    ]
)
TEXT = ("corpus", "measure", "model_key", "run_id", "run_source", "definition", "predictors", "status", "input_sha256")
INTEGERS = ("n_rows", "n_words", "n_outlier_words")
LISTS = ("curve_surprisal_bits", "linear_effect_ms", "linear_effect_se_ms", "gam_effect_ms", "gam_effect_se_ms")


def wilcox_sets(theirs: pd.DataFrame, ours: pd.DataFrame) -> list[tuple[dict, pd.DataFrame]]:
    """MECO: their four models on their rows, and our scored runs (WT) on the same words."""
    sets = []
    for (corpus, model_key), g in theirs.groupby(["corpus", "model_key"], sort=True):
        g = g.sort_values("file_row")
        g = g[frequency_filter(g)]
        sets.append(
            (
                {
                    "corpus": corpus,
                    "measure": WILCOX_MEASURE,
                    "model_key": model_key,
                    "run_id": f"wilcox-xlang:{model_key}",
                    "run_source": "imported_words",
                    "definition": "as given",
                    "predictors": "wilcox_2023",
                },
                pd.DataFrame({k: g[v].to_numpy(float) for k, v in THEIRS.items()}),
            )
        )
    if len(theirs):
        words = our_words(theirs, measure_columns(theirs))
        for (corpus, model_key, run_id), r in ours.groupby(["corpus", "model_key", "run_id"], sort=True):
            w = our_surprisal_words(words, r, corpus, "wt")
            w = w[frequency_filter(w)]
            sets.append(
                (
                    {
                        "corpus": corpus,
                        "measure": WILCOX_MEASURE,
                        "model_key": model_key,
                        "run_id": run_id,
                        "run_source": "scored",
                        "definition": "wt",
                        "predictors": "wilcox_2023",
                    },
                    pd.DataFrame({k: w[v].to_numpy(float) for k, v in THEIRS.items()}),
                )
            )
    return sets


def natural_order(doc_id: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Sort keys for texts in their order: numeric ids as numbers (then the others, as text)."""
    num = pd.to_numeric(doc_id, errors="coerce")
    return num.fillna(np.inf).astype(float), doc_id.astype(str)


def reading_sets(means: pd.DataFrame, words: pd.DataFrame, surprisal: pd.DataFrame) -> list[tuple[dict, pd.DataFrame]]:
    """The other corpora's word means with our predictors, for every scored run (WT) and imported GPT-2."""
    sets = []
    w = words.copy()
    for p in ("", "prev1_", "prev2_"):
        w[f"{p}unigram_surprisal_bits"] = (9.0 - w[f"{p}log_frequency"].astype(float)) * LOG2_10
    for corpus, m in means.groupby("corpus", sort=True):
        present = set(m["measure"])
        # gaze duration where the corpus has eye tracking, else its self-paced reading (the declared defaults)
        measure = next((m for m in DEFAULT_MEASURES if m in present), None)
        if measure is None:
            continue
        m = m[m["measure"] == measure]
        rows = m[["doc_id", "word_index", "mean_rt_ms"]].merge(
            w[w["corpus"] == corpus][
                [
                    "doc_id",
                    "word_index",
                    "length_chars",
                    "prev1_length_chars",
                    "unigram_surprisal_bits",
                    "prev1_unigram_surprisal_bits",
                    "prev2_unigram_surprisal_bits",
                ]
            ],
            on=["doc_id", "word_index"],
        )
        order, text = natural_order(rows["doc_id"])
        rows = rows.assign(_o=order, _t=text).sort_values(["_o", "_t", "word_index"])
        rows = rows[frequency_filter(rows)]
        s = surprisal[surprisal["corpus"] == corpus]
        runs = s[["model_key", "run_id", "run_source", "definition"]].drop_duplicates()
        scored = runs[(runs["run_source"] == "scored") & (runs["definition"] == "wt")]
        gpt2 = runs[(runs["run_source"] != "scored") & (runs["model_key"] == "gpt2")]
        gpt2 = gpt2.sort_values("definition", ascending=False).drop_duplicates("run_id")  # wt before lw
        for r in pd.concat([scored, gpt2]).sort_values(["run_id"]).to_dict("records"):
            g = s[(s["run_id"] == r["run_id"]) & (s["definition"] == r["definition"])]
            x = rows.merge(
                g[["doc_id", "word_index", "surprisal_nats", "prev1_surprisal_nats"]],
                on=["doc_id", "word_index"],
                how="left",
            )
            sets.append(
                (
                    {"corpus": corpus, "measure": measure, **r, "predictors": "ours"},
                    pd.DataFrame(
                        {
                            "rt": x["mean_rt_ms"].to_numpy(float),
                            "freq": x["unigram_surprisal_bits"].to_numpy(float),
                            "len": x["length_chars"].to_numpy(float),
                            "prev_freq": x["prev1_unigram_surprisal_bits"].to_numpy(float),
                            "prev_len": x["prev1_length_chars"].to_numpy(float),
                            "surp": x["surprisal_nats"].to_numpy(float) / LN2,
                            "prev_surp": x["prev1_surprisal_nats"].to_numpy(float) / LN2,
                        }
                    ),
                )
            )
    return sets


def fingerprint(x: pd.DataFrame, script_sha: str) -> str:
    """sha256 of what R is given for the set (its rows as R reads them) and of the R script."""
    return hashlib.sha256((script_sha + r_text(x)).encode()).hexdigest()


def exact_text(v: float) -> str:
    """A double as text R reads back to the same double: C99 hex (R's decimal parser can be 1 ulp off, which moves
    a GAM's smoothing parameter where GCV is flat: 5.6e-5 nats per word on MECO Korean, measured)."""
    if np.isnan(v):
        return ""
    return "Inf" if v == np.inf else "-Inf" if v == -np.inf else float(v).hex()


#: float.hex's words for the values that have no digits -> R's
_NON_FINITE = {"nan": "", "inf": "Inf", "-inf": "-Inf"}


def column_text(values: np.ndarray) -> list[str]:
    """exact_text of every value of a column (float.hex on the column's Python floats: a tenth of the time of
    calling exact_text on each value, and the same text)."""
    out = [v.hex() for v in np.asarray(values, dtype=float).tolist()]
    return [_NON_FINITE.get(t, t) for t in out]


def r_text(x: pd.DataFrame) -> str:
    """The set's rows as CSV text (R_COLUMNS, exact_text), as pandas' to_csv writes them."""
    columns = [column_text(x[c].to_numpy()) for c in R_COLUMNS]
    return "".join([",".join(R_COLUMNS) + "\n", *(",".join(row) + "\n" for row in zip(*columns))])


def run_r(sets: list[tuple[str, pd.DataFrame]], workdir: Path) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """(held-out densities, curves, {set: why it has no fit}) of the sets R could fit."""
    inp, words, curves = workdir / "gam_input.csv", workdir / "gam_words.csv", workdir / "gam_curves.csv"
    errors = workdir / "gam_errors.csv"
    frames = []
    for name, x in sets:
        base = hashlib.sha256(x[BASELINE].to_csv(index=False, float_format="%.17g").encode()).hexdigest()[:16]
        frames.append(
            pd.DataFrame({c: column_text(x[c].to_numpy()) for c in R_COLUMNS}, index=x.index).assign(
                set=name, base="b" + base
            )[["set", "base", *R_COLUMNS]]
        )
    pd.concat(frames).to_csv(inp, index=False)
    proc = subprocess.run(
        ["Rscript", "--vanilla", str(SCRIPT), str(inp), str(words), str(curves), str(errors)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise RuntimeError(f"Rscript {SCRIPT.name} failed: {last}")
    failed = pd.read_csv(errors, dtype=str, keep_default_na=False)
    return (
        pd.read_csv(words, dtype={"set": str}),
        pd.read_csv(curves, dtype={"set": str}),
        dict(zip(failed["set"], failed["error"])),
    )


def summarize(words: pd.DataFrame, curves: pd.DataFrame, x: pd.DataFrame) -> dict:
    """Their comparison of the two links on one set's held-out densities, and the curves."""
    lin = (words["ll_linear"] - words["ll_baseline"]).to_numpy(float)
    gam = (words["ll_gam"] - words["ll_baseline"]).to_numpy(float)
    both = ~np.isnan(lin) & ~np.isnan(gam)
    lin, gam = lin[both], gam[both]
    comp = lin - gam
    keep = ~(np.abs(comp) > comp.mean() + 3 * comp.std(ddof=1))
    out = {"n_words": int(keep.sum()), "n_outlier_words": int((~keep).sum())}
    for name, d in (("linear", lin[keep]), ("gam", gam[keep]), ("gam_minus_linear", gam[keep] - lin[keep])):
        s = rr.word_delta_summary(d)
        out.update({f"{name}_{k}": s[k] for k in STATS})
        if name == "gam_minus_linear":
            out["gam_minus_linear_p_value"] = s["p_value"]
    c = curves.sort_values("surprisal_bits")
    cl, cg = c[c["link"] == "linear"], c[c["link"] == "gam"]
    surp = x["surp"].dropna().to_numpy(float)
    out.update(
        {
            "gam_surprisal_edf": float(cg["edf"].iloc[0]),
            "surprisal_p01_bits": float(np.quantile(surp, 0.01)),
            "surprisal_p99_bits": float(np.quantile(surp, 0.99)),
            "curve_surprisal_bits": cl["surprisal_bits"].round(10).tolist(),
            "linear_effect_ms": cl["effect_ms"].tolist(),
            "linear_effect_se_ms": cl["se_ms"].tolist(),
            "gam_effect_ms": cg["effect_ms"].tolist(),
            "gam_effect_se_ms": cg["se_ms"].tolist(),
        }
    )
    return out


def model(dbt, session):
    with rr.one_blas_thread():  # many small solves (rr.one_blas_thread says why)
        out = _model(dbt, session)
    return out  # dbt's parser wants the function's last statement a return


def _model(dbt, session):
    flag = str(dbt.config.get("gam")).strip().lower()
    on_for = {c.strip() for c in flag.split(",")}  # var gam: true, or the corpora to fit ("meco_en,provo")

    def enabled(corpus: str) -> bool:
        return flag in ("true", "1", "yes") or corpus in on_for

    theirs = dbt.ref("stg_wilcox_xlang_words").df()
    meco = sorted(theirs["corpus"].unique())
    ours = scored_runs(dbt.ref("int_word_surprisal_runs"), meco)
    means = dbt.ref("int_reading_word_means").df()
    means = means[~means["corpus"].isin(meco)]
    words = dbt.ref("int_reading_words").df()
    surprisal = dbt.ref("int_reading_surprisal").df()
    sets = wilcox_sets(theirs, ours) + reading_sets(means, words, surprisal[~surprisal["corpus"].isin(meco)])
    script_sha = hashlib.sha256(SCRIPT.read_bytes()).hexdigest()
    kept = rr.kept_fits(session, str(dbt.this), COLUMNS, key=lambda r: r["input_sha256"])
    rows, todo = [], []
    for keys, x in sets:
        sha = fingerprint(x, script_sha)
        old = kept.get(sha)
        if old is not None and all(old[k] == keys[k] for k in keys):
            rows.append(old)
        else:
            todo.append((keys, x, sha))
    have_r = shutil.which("Rscript") is not None
    fit = [t for t in todo if have_r and enabled(t[0]["corpus"])]
    if fit:
        with tempfile.TemporaryDirectory() as tmp:
            w, c, failed = run_r([(f"s{i}", x) for i, (_, x, _) in enumerate(fit)], Path(tmp))
        for i, (keys, x, sha) in enumerate(fit):
            name = f"s{i}"
            if name in failed:  # no number, and refitted by the next build that fits this corpus
                rows.append({**keys, "status": f"not fitted: {failed[name]}", "input_sha256": sha, "n_rows": len(x)})
                continue
            rows.append(
                {
                    **keys,
                    "status": "ok",
                    "input_sha256": sha,
                    "n_rows": len(x),
                    **summarize(w[w["set"] == name], c[c["set"] == name], x),
                }
            )
    for keys, x, sha in todo:
        if not (have_r and enabled(keys["corpus"])):
            why = (
                "not run: Rscript not found (install r-base-core r-cran-mgcv)"
                if not have_r
                else "not run: the R engine is off for this corpus in this build (predictabase build --gam)"
            )
            rows.append({**keys, "status": why, "input_sha256": sha, "n_rows": len(x)})
    return rr.typed_frame(rows, COLUMNS, text=TEXT, integers=INTEGERS, lists=LISTS)
