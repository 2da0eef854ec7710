"""Figure 3 of Casares et al. 2022: Spearman correlations between demographics and effort / loss terms.

Casares et al. 2022, Analysis of Results: "we can confidently reject the normality hypothesis for all time
distributions. Because of this, we use Spearman correlations"; Fig. 3: "Spearman correlation matrix
between demographic variables and the different terms of human effort and loss appearing in Eq. 2 and
Eq. 3, averaged over all tasks" (appendix Fig. 2: per domain -> rows with domain != 'all').

One observation = one respondent; each term is the respondent's mean over the domains in scope of
their per-domain estimate (int_wild_respondent_terms: D_H = first-instance prompting time - W_H,
W_H = mean of instances 2-3, U_H, V_H, G_H = means over the instances, L_H = mean loss).
Group A (with GPT-3) has age, English level, GPT-3 familiarity and assistants; group B (without) has
age and English level only, so the two groups get separate matrices. Every ordered pair (x, y) is a
row (both triangles and the diagonal, for the heat map); p-values are the two-sided scipy.spearmanr
ones, uncorrected. Coding: eng_level_code 1 = Native .. 4 = Basic (higher = weaker English);
assistants_code 1 = yes, 2 = no (README order, see docs/results/wild.md).
"""

import numpy as np
import pandas as pd
from scipy import stats

DEMOGRAPHICS = {
    "with_model": ["age_years", "eng_level_code", "gpt3_familiarity", "assistants_code"],
    "without_model": ["age_years", "eng_level_code"],
}
TERMS = {
    "with_model": {
        "devising_s": "D_H",
        "wrapping_s": "W_H",
        "unwrapping_s": "U_H",
        "validating_s": "V_H",
        "loss_mean": "L_H (GPT-3)",
    },
    "without_model": {"solving_s": "G_H", "loss_mean": "L_H (human)"},
}
COLUMNS = [
    "condition",
    "domain",
    "variable_x",
    "variable_y",
    "kind_x",
    "kind_y",
    "term_y",
    "n_respondents",
    "spearman_rho",
    "p_value",
]


def model(dbt, session):
    terms = dbt.ref("int_wild_respondent_terms").df()
    resp = dbt.ref("stg_wild_respondents").df()
    if terms.empty:
        return pd.DataFrame(
            {
                c: pd.Series(dtype="float64" if c in ("spearman_rho", "p_value", "n_respondents") else "object")
                for c in COLUMNS
            }
        )
    rows = []
    for cond, demo in DEMOGRAPHICS.items():
        term_cols = list(TERMS[cond])
        t = terms[terms["condition"] == cond]
        scopes = [("all", t)] + [(d, g) for d, g in t.groupby("domain")]
        for scope, sub in scopes:
            # rounded to 1e-9 (s): a mean's last bit depends on the order DuckDB hands the rows over, and equal
            # means (losses are quarters averaged) must stay tied for Spearman's ranks
            per = sub.groupby("respondent_id")[term_cols].mean().round(9).reset_index()
            per = per.merge(resp[["respondent_id"] + demo], on="respondent_id", how="left")
            variables = demo + term_cols
            kinds = {v: ("demographic" if v in demo else "term") for v in variables}
            for x in variables:
                for y in variables:
                    pair = per[[x, y]].astype(float).dropna()
                    n = len(pair)
                    if x == y:
                        rho, p = (1.0 if n > 1 else np.nan), np.nan
                    elif n < 3 or pair[x].nunique() < 2 or pair[y].nunique() < 2:
                        rho, p = np.nan, np.nan
                    else:
                        r = stats.spearmanr(pair[x], pair[y])
                        rho, p = float(r.statistic), float(r.pvalue)
                    rows.append(
                        dict(
                            condition=cond,
                            domain=scope,
                            variable_x=x,
                            variable_y=y,
                            kind_x=kinds[x],
                            kind_y=kinds[y],
                            term_y=TERMS[cond].get(y),
                            n_respondents=n,
                            spearman_rho=rho,
                            p_value=p,
                        )
                    )
    return pd.DataFrame(rows, columns=COLUMNS)
