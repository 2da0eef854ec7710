"""Predictability norm correlation (PNC, Hao et al. 2020, sec. 3.3.2): the Pearson correlation between a model's word
surprisal and the surprisal of the same word in human cloze norms, per (corpus with cloze norms, run,
definition): PNC = r(model surprisal, cloze surprisal) over the words (Hao et al. 2020, sec. 3.3.2: "the Pearson
correlation between surprisal values computed by a language model and surprisal values measured from human
subjects using a Cloze task"). Every corpus with cloze norms in int_cloze, shipped or a user's (no corpus list:
the join to int_cloze selects them). Cloze surprisal = -ln of the cloze probability int_cloze gives (UCL:
Laplace, as de Varda et al. publish it; Provo and user counts: (c + 1) / (N + 2); a user probability as given,
p = 0 having no surprisal); model surprisal of the word itself (int_reading_surprisal, nats; the unit does not
change r). Every word with both values enters. Interval: 95% percentile bootstrap over texts
(B = var bootstrap_replicates resamples of the texts with replacement, fixed seed), computed from per-text
sums, so a resampled text brings all its words. mart_pnc publishes it as is."""

import numpy as np

from predictabase.stats import reading_regression as rr

SEED = 20261125
COLUMNS = [
    "corpus",
    "model_key",
    "run_id",
    "run_source",
    "definition",
    "n_words",
    "n_texts",
    "pnc_pearson_r",
    "pnc_ci_low",
    "pnc_ci_high",
    "bootstrap_replicates",
    "bootstrap_seed",
]


def pearson_from_sums(S: np.ndarray) -> np.ndarray:
    """r from columns n, sx, sy, sxx, syy, sxy (last axis)."""
    n, sx, sy, sxx, syy, sxy = (S[..., i] for i in range(6))
    cov = sxy - sx * sy / n
    vx, vy = sxx - sx * sx / n, syy - sy * sy / n
    with np.errstate(invalid="ignore", divide="ignore"):
        return cov / np.sqrt(vx * vy)


def pnc(x: np.ndarray, y: np.ndarray, text: np.ndarray, B: int, seed: int) -> tuple[float, float, float, int]:
    codes, t = np.unique(text, return_inverse=True)
    D = len(codes)
    sums = np.stack(
        [np.bincount(t, weights=w, minlength=D) for w in (np.ones_like(x), x, y, x * x, y * y, x * y)], axis=1
    )
    r = float(pearson_from_sums(sums.sum(0)))
    rng = np.random.default_rng(seed)
    counts = np.stack([np.bincount(rng.integers(0, D, D), minlength=D) for _ in range(B)])
    rb = pearson_from_sums(counts @ sums)
    lo, hi = np.nanpercentile(rb, [2.5, 97.5])
    return r, float(lo), float(hi), D


def in_list(column: str, values) -> str:
    """SQL `column in (...)` over string values, quoted ('false' for none)."""
    quoted = ["'" + str(v).replace("'", "''") + "'" for v in sorted(values)]
    return f"{column} in ({', '.join(quoted)})" if quoted else "false"


def model(dbt, session):
    B = int(dbt.config.get("bootstrap_replicates") or 1000)
    c = dbt.ref("int_cloze").df()[["corpus", "doc_id", "word_index", "cloze_surprisal_nats"]]
    s = dbt.ref("int_reading_surprisal").filter(in_list("corpus", c["corpus"].unique())).df()
    d = s.merge(c, on=["corpus", "doc_id", "word_index"], how="inner")
    d = d[d["cloze_surprisal_nats"].notna() & d["surprisal_nats"].notna()]
    rows = []
    for (corpus, run_id, definition), g in d.groupby(["corpus", "run_id", "definition"], sort=True):
        if len(g) < 3:
            continue
        r, lo, hi, D = pnc(
            g["surprisal_nats"].to_numpy(float),
            g["cloze_surprisal_nats"].to_numpy(float),
            g["doc_id"].astype(str).to_numpy(),
            B,
            SEED,
        )
        rows.append(
            dict(
                corpus=corpus,
                model_key=g["model_key"].iloc[0],
                run_id=run_id,
                run_source=g["run_source"].iloc[0],
                definition=definition,
                n_words=len(g),
                n_texts=D,
                pnc_pearson_r=r,
                pnc_ci_low=lo,
                pnc_ci_high=hi,
                bootstrap_replicates=B,
                bootstrap_seed=SEED,
            )
        )
    return rr.typed_frame(
        rows,
        COLUMNS,
        text=("corpus", "model_key", "run_id", "run_source", "definition"),
        integers=("n_words", "n_texts", "bootstrap_replicates", "bootstrap_seed"),
    )
