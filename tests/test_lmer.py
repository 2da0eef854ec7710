"""The R engine of the reading-time regressions (predictabase/stats/fit_lmer.R: Oh & Schuler's (2024) LMER through lme4)
on small simulated data with known answers. `make test` installs Debian's R with lme4 (Makefile r-engine)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "predictabase" / "stats" / "fit_lmer.R"
pytestmark = pytest.mark.skipif(shutil.which("Rscript") is None, reason="needs Rscript with lme4 (make r-engine)")


def _simulate(tmp: Path, subject_sd: float, item_sd: float, seed: int = 3):
    import pandas as pd

    rng = np.random.default_rng(seed)
    S, I = 20, 300
    subj, item = np.repeat(np.arange(S), I), np.tile(np.arange(I), S)
    # length and index take 4 values each: ns(., df = 3) plus the intercept then spans every function of them,
    # exactly the column space of dummies, so an OLS with C(length) + C(index) has the same fixed effects
    length = rng.integers(2, 6, size=I)[item].astype(float)
    index = rng.integers(0, 4, size=I)[item].astype(float)
    freq, fp1, fp2 = (rng.normal(4, 1, size=I) for _ in range(3))
    surp, sp1, sp2 = (rng.gamma(2, 2, size=I) for _ in range(3))
    a = rng.normal(0, subject_sd, S) if subject_sd else np.zeros(S)
    b = rng.normal(0, item_sd, I) if item_sd else np.zeros(I)
    noise = rng.normal(0, 50, (S, I))
    if not (subject_sd or item_sd):  # double-centred: no subject or item has any mean noise, so lme4's ML
        noise = noise - noise.mean(1, keepdims=True) - noise.mean(0, keepdims=True) + noise.mean()  # variances hit 0
    rt = 300 + 10 * length - 5 * freq[item] + 8 * surp[item] + 3 * sp1[item] + a[subj] + b[item] + noise.ravel()
    d = pd.DataFrame(
        dict(
            subject=subj,
            item=item,
            rt=rt,
            length=length,
            index=index,
            freq=freq[item],
            freq_prev1=fp1[item],
            freq_prev2=fp2[item],
            surp__real=surp[item],
            surp_prev1__real=sp1[item],
            surp_prev2__real=sp2[item],
            surp__shuffled=rng.permutation(surp)[item],
            surp_prev1__shuffled=rng.permutation(sp1)[item],
            surp_prev2__shuffled=rng.permutation(sp2)[item],
        )
    )
    path = tmp / "in.csv"
    d.to_csv(path, index=False)
    return d, path


def _run(inp: Path, out: Path, sets: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["Rscript", "--vanilla", str(SCRIPT), str(inp), str(out), sets], capture_output=True, text=True
    )


def test_without_random_effect_variance_the_full_fit_is_the_ols_fit(tmp_path):
    """No subject or item variance in the data (the noise is double-centred): lme4's ML estimates of both are 0
    (a singular fit), so the full model's log-likelihood is exactly the OLS log-likelihood of the same fixed
    effects (statsmodels)."""
    import pandas as pd
    import statsmodels.formula.api as smf

    d, inp = _simulate(tmp_path, 0.0, 0.0)
    r = _run(inp, tmp_path / "out.csv", "real")
    assert r.returncode == 0, r.stderr
    res = pd.read_csv(tmp_path / "out.csv").set_index("set")
    ols = smf.ols(
        "rt ~ C(length) + freq + freq_prev1 + freq_prev2 + C(index) + surp__real + surp_prev1__real + surp_prev2__real",
        data=d,
    ).fit()
    assert res.loc["real", "loglik_full"] == pytest.approx(ols.llf, abs=1e-3)
    assert (
        res.loc["real", "n_obs"] == 6000 and res.loc["real", "n_subjects"] == 20 and res.loc["real", "n_items"] == 300
    )


def test_planted_surprisal_effect_and_a_shuffled_one(tmp_path):
    import pandas as pd

    _d, inp = _simulate(tmp_path, 30.0, 20.0)
    r = _run(inp, tmp_path / "out.csv", "real,shuffled")
    assert r.returncode == 0, r.stderr
    res = pd.read_csv(tmp_path / "out.csv").set_index("set")
    # the same rows: one baseline for both sets
    assert res.loc["real", "loglik_baseline"] == res.loc["shuffled", "loglik_baseline"]
    assert res.loc["real", "delta_ll_total"] > 50  # a likelihood-ratio statistic of > 100 on 3 df
    assert 0 <= res.loc["shuffled", "delta_ll_total"] < 8  # ML nesting: >= 0; chance level ~ chi2(3) / 2
    np.testing.assert_allclose(res["delta_ll_total"], res["loglik_full"] - res["loglik_baseline"], atol=1e-6)


def test_bad_input_is_one_line_and_status_2(tmp_path):
    _d, inp = _simulate(tmp_path, 1.0, 1.0)
    r = _run(inp, tmp_path / "out.csv", "nosuchset")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        f"{inp}: missing column(s) surp__nosuchset, surp_prev1__nosuchset, surp_prev2__nosuchset"
    ]
    assert not (tmp_path / "out.csv").exists()


def test_r_random_numbers_are_replayed():
    """python/r_rng.py rebuilds R's set.seed(42); sample(n) and cut(seq(1, n), breaks = 10): Pimentel & Meister's
    folds. Checked against this machine's R."""
    from predictabase.stats import r_rng

    out = subprocess.run(
        [
            "Rscript",
            "--vanilla",
            "-e",
            "set.seed(42); cat(sample(2745)); cat('\\n'); cat(cut(seq(1, 2444), breaks = 10, labels = FALSE))",
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    sample, cut = (np.array(line.split(), dtype=int) for line in out.stdout.strip().splitlines())
    assert (r_rng.r_sample(42, 2745) == sample).all()
    assert (r_rng.r_cut_folds(2444, 10) == cut).all()
