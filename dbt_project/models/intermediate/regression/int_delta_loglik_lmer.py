"""Oh & Schuler's (2024) delta log-likelihood on Natural Stories self-paced reading, by its own procedure: linear mixed
models fitted with R's lme4 (through `Rscript predictabase/stats/fit_lmer.R`), one row per (run, definition)
of Natural Stories.

    RT ~ surp + surp_prev1 + surp_prev2 + s(length) + freq + freq_prev1 + freq_prev2 + s(index)
         + (1 | subject) + (1 | item)                                               (Oh & Schuler 2024, sec. 4.1)

and a baseline without the three surp terms; ΔLL = logLik(full) - logLik(baseline), both fitted by maximum
likelihood (REML = FALSE) on the same rows, in sample (the paper's procedure; no held-out data). s() is read as
a natural cubic spline basis, splines::ns(x, df = 3); length = characters without the punctuation at the word's
ends, index = position of the word in its sentence (0-based), freq = wordfreq's Zipf log frequency, item =
the word token (story x position: each word read by ~180 subjects), subject = the reader.
Observations: int_reading_observations' Natural Stories SPR rows (appendix B: 100 <= RT <= 3000 ms,
sentence-initial and -final words out, readers with fewer than 4 correct answers out), rows with a missing
predictor out, then the half with (subject index + sentence index) even, subject index = 0-based rank of the
reader's number, sentence index = 0-based number of the sentence in the whole corpus (stories in order).

Runs only when var `lmer` is true (`predictabase build --lmer`: minutes of R per model, so not in the main
job) and Rscript is found. A build without it keeps the fits of the last `--lmer` build for the runs that
still exist (a run id changes whenever a model is scored again, so a kept fit always belongs to the same
surprisals); every other row says why it has no fit (status) and has no numbers.
"""

import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from predictabase.stats import reading_regression as rr

SCRIPT = Path(rr.__file__).with_name("fit_lmer.R")
#: the corpus and measure of Oh & Schuler's (2024) reading-time analysis, which this model replays (Natural Stories'
#: self-paced reading times, preprocessed as their appendix B says)
CORPUS, MEASURE = "natural_stories", "spr"
COLUMNS = [
    "corpus",
    "measure",
    "model_key",
    "run_id",
    "run_source",
    "definition",
    "method",
    "status",
    "n_words",
    "n_rows",
    "n_readers",
    "n_folds",
    "fold_seed",
    "delta_loglik_nats_per_row",
    "delta_loglik_se_nats_per_row",
    "delta_loglik_ci_low_nats_per_row",
    "delta_loglik_ci_high_nats_per_row",
    "delta_loglik_total_nats",
    "p_value",
    "loglik_baseline_nats",
    "loglik_full_nats",
    "sum_surprisal_nats",
    "fold_delta_nats_per_row",
]
TEXT = ("corpus", "measure", "model_key", "run_id", "run_source", "definition", "method", "status")
INTEGERS = ("n_words", "n_rows", "n_readers", "n_folds", "fold_seed")


def half_selection(obs: pd.DataFrame) -> np.ndarray:
    """Oh & Schuler 2024, appendix B: the observations whose subject index + sentence index is even."""
    subject = obs["reader_id"].astype(int).rank(method="dense").astype(int).to_numpy() - 1
    return (subject + obs["corpus_sentence_index"].to_numpy()) % 2 == 0


def design(dbt) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(observations with the baseline predictors, surprisal long) for Natural Stories."""
    words = dbt.ref("int_reading_words").filter(f"corpus = '{CORPUS}'").df()
    words["doc_order"] = words["doc_id"].astype(int)
    first = (
        words.sort_values(["doc_order", "word_index"])
        .groupby(["doc_order", "sentence_index"], sort=True)
        .size()
        .reset_index()[["doc_order", "sentence_index"]]
    )
    first["corpus_sentence_index"] = np.arange(len(first))
    words = words.merge(first, on=["doc_order", "sentence_index"])
    obs = dbt.ref("int_reading_observations").filter(f"corpus = '{CORPUS}' and measure = '{MEASURE}'").df()
    obs = obs.merge(
        words[
            [
                "doc_id",
                "word_index",
                "length_chars",
                "word_in_sentence",
                "log_frequency",
                "prev1_log_frequency",
                "prev2_log_frequency",
                "corpus_sentence_index",
            ]
        ],
        on=["doc_id", "word_index"],
    )
    obs = obs[
        rr.complete_rows(
            obs[["length_chars", "log_frequency", "prev1_log_frequency", "prev2_log_frequency"]].to_numpy(float)
        )
    ]
    obs = obs[half_selection(obs)]
    s = dbt.ref("int_reading_surprisal").filter(f"corpus = '{CORPUS}'").df()
    return obs, s


def run_r(table: pd.DataFrame, sets: list[str], workdir: Path) -> pd.DataFrame:
    inp, out = workdir / "lmer_input.csv", workdir / "lmer_output.csv"
    table.to_csv(inp, index=False)
    proc = subprocess.run(
        ["Rscript", "--vanilla", str(SCRIPT), str(inp), str(out), ",".join(sets)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise RuntimeError(f"Rscript {SCRIPT.name} failed: {last}")
    return pd.read_csv(out)


def model(dbt, session):
    enabled = str(dbt.config.get("lmer")).strip().lower() in ("true", "1", "yes")
    s_all = dbt.ref("int_reading_surprisal").filter(f"corpus = '{CORPUS}'").df()
    sets = (
        s_all[["model_key", "run_id", "run_source", "definition"]]
        .drop_duplicates()
        .sort_values(["run_id", "definition"])
    )
    base = {"corpus": CORPUS, "measure": MEASURE, "method": "lmer"}
    if not enabled or shutil.which("Rscript") is None:
        why = (
            "not run: the R engine is off in this build (predictabase build --lmer)"
            if not enabled
            else "not run: Rscript not found (install r-base-core r-cran-lme4)"
        )
        kept = rr.kept_fits(session, str(dbt.this), COLUMNS, key=lambda r: (r["run_id"], r["definition"]))
        rows = []
        for r in sets.to_dict("records"):
            old = kept.get((r["run_id"], r["definition"]))
            rows.append(old if old is not None else {**base, **r, "status": why})
        return rr.typed_frame(rows, COLUMNS, text=TEXT, integers=INTEGERS, lists=("fold_delta_nats_per_row",))
    obs, s = design(dbt)
    table = obs[
        [
            "reader_id",
            "doc_id",
            "word_index",
            "rt_ms",
            "length_chars",
            "word_in_sentence",
            "log_frequency",
            "prev1_log_frequency",
            "prev2_log_frequency",
        ]
    ].copy()
    table.columns = ["subject", "doc_id", "word_index", "rt", "length", "index", "freq", "freq_prev1", "freq_prev2"]
    table["item"] = table["doc_id"].astype(str) + "/" + table["word_index"].astype(str)
    names, meta = [], []
    for i, r in enumerate(sets.to_dict("records")):
        g = s[(s["run_id"] == r["run_id"]) & (s["definition"] == r["definition"])]
        g = g.set_index(g["doc_id"].astype(str) + "/" + g["word_index"].astype(str))
        for col, src in (
            ("surp", "surprisal_nats"),
            ("surp_prev1", "prev1_surprisal_nats"),
            ("surp_prev2", "prev2_surprisal_nats"),
        ):
            table[f"{col}__s{i}"] = g[src].reindex(table["item"]).to_numpy()
        names.append(f"s{i}")
        meta.append(r)
    with tempfile.TemporaryDirectory() as tmp:
        res = run_r(table.drop(columns=["doc_id", "word_index"]), names, Path(tmp)).set_index("set")
    rows = []
    for name, r in zip(names, meta):
        f = res.loc[name]
        n = int(f["n_obs"])
        rows.append(
            {
                **base,
                **r,
                "status": "ok",
                "n_rows": n,
                "n_readers": int(f["n_subjects"]),
                "n_words": int(f["n_items"]),
                "delta_loglik_total_nats": float(f["delta_ll_total"]),
                "delta_loglik_nats_per_row": float(f["delta_ll_total"]) / n,
                "loglik_baseline_nats": float(f["loglik_baseline"]),
                "loglik_full_nats": float(f["loglik_full"]),
            }
        )
    return rr.typed_frame(rows, COLUMNS, text=TEXT, integers=INTEGERS, lists=("fold_delta_nats_per_row",))
