"""Human perplexity (Shlegeris et al. 2024, sec. 4, Figure 4; appendices B-D).

Reads only the published snapshot's `mart_pairwise_perplexity`; computes nothing (filters,
labels and plots the mart's columns).
"""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

import charts
import data
import labels
import url_state

MART = "mart_pairwise_perplexity"
# display texts only: labels, counts and the predictors come from the mart's columns
SUBSETS = {
    "all": "both question sets",
    "word_tokens": "word tokens only, appendix D",
    "set_1": "question set 1",
    "set_2": "question set 2",
}
ROUNDINGS = {
    "interface_11": "the game's 11 choices (1%, 10%, ..., 90%, 99%)",
    "coarse_5": "coarser: nearest of 10, 20, 50, 80, 90 %",
    "coarse_3": "coarsest: nearest of 20, 50, 80 %",
}


st.title("Human perplexity")
df = data.page_table(
    MART, "The snapshot has no pairwise-game data yet: `predictabase ingest pairwise`, then `predictabase build`."
)
# the finding: humans vs the generator GPT-2 small, both questions sets, the game's 11 choices, ±2 sigma
_head = df[(df["subset"] == "all") & (df["uncertainty_method"] == "two_sigma")]
_h = _head[(_head["predictor_kind"] == "human") & (_head["rounding"] == "interface_11")]["perplexity"]
_g = _head[_head["predictor_label"].str.startswith("GPT-2 small")]
_g_round = _g[_g["rounding"] == "interface_11"]["perplexity"]
_g_exact = _g[_g["rounding"] == "exact"]["perplexity"]
if len(_h) and len(_g_round) and len(_g_exact):
    st.markdown(
        f"In the pairwise guessing game, humans' estimated perplexity is {_h.iloc[0]:.0f} per token, "
        f"against {_g_round.iloc[0]:.0f} for GPT-2 small answering with the same 11 buttons and "
        f"{_g_exact.iloc[0]:.0f} with its exact probabilities: lower is better, so "
        + (
            "the model predicts the next token better than people do."
            if _g_round.iloc[0] < _h.iloc[0]
            else "people predict the next token better than the model."
        )
    )
st.caption(
    "From Shlegeris, Roger, Chan & McLean, *Language Models Are Better Than Humans at Next-token "
    "Prediction* (TMLR 2024), section 4: human perplexity estimated from a pairwise guessing game, next to "
    "language models measured the same way on the same questions."
)

# questions and players of each subset (the humans' estimate; every predictor answers the same rows)
humans = df[(df["predictor_kind"] == "human") & (df["uncertainty_method"] == "two_sigma")].drop_duplicates("subset")
counts = humans.set_index("subset")[["n_questions", "n_players"]].to_dict("index")
n_resamples = df["n_resamples"].max()
METHODS = {
    "two_sigma": "±2 sigma over questions (Figure 4)",
    "bootstrap_players": f"bootstrap: {n_resamples:.0f} random halves of the players, median and 5-95 % (Figure 7)"
    if pd.notna(n_resamples)
    else "bootstrap over random halves of the players (Figure 7)",
}


def subset_label(s: str) -> str:
    c = counts.get(s)
    return SUBSETS.get(s, s) + (f" ({c['n_questions']} questions, {c['n_players']} players)" if c else "")


c1, c2, c3 = st.columns(3)
subset = url_state.radio("Questions", SUBSETS, format_func=subset_label, key="hp_subset", param="questions", where=c1)
rounding = url_state.radio(
    "Rounding of the answers",
    ROUNDINGS,
    format_func=ROUNDINGS.get,
    key="hp_rounding",
    param="rounding",
    where=c2,
    help="Applies to the 'rounded' models and, post hoc, to the humans' answers (appendix "
    "C). The unrounded models always use their exact probability ratios.",
)
method = url_state.radio(
    "Uncertainty", METHODS, format_func=METHODS.get, key="hp_method", param="uncertainty", where=c3
)

sel = df[
    (df["subset"] == subset)
    & (df["uncertainty_method"] == method)
    & ((df["rounding"] == rounding) | ((df["predictor_kind"] == "language_model") & (df["rounding"] == "exact")))
].copy()
sel["row"] = sel.apply(
    lambda r: (
        r["predictor_label"]
        + (", rounded" if r["predictor_kind"] == "language_model" and r["rounding"] != "exact" else "")
    ),
    axis=1,
)
sel["group"] = sel["predictor_kind"].map({"human": "humans", "language_model": "language models"})

if sel.empty:
    st.warning("No rows for this combination in the snapshot.")
    st.stop()

# rows top to bottom: the humans, then the language models from the least to the most predictive (their
# true perplexity on these questions), rounded first, then exact
models = sel[sel["rounding"] == "exact"].sort_values("true_perplexity", ascending=False)["predictor_label"].tolist()
ORDER = (
    sel.loc[sel["predictor_kind"] == "human", "row"].drop_duplicates().tolist()
    + [f"{m}, rounded" for m in models]
    + models
)

# labels in full (the default 180 px cuts "GPT-2 small (generator), rounded")
y = alt.Y("row:N", sort=ORDER, title=None, axis=alt.Axis(labelLimit=400, labelFontSize=12))
base = alt.Chart(sel).encode(
    y=y,
    color=alt.Color(
        "group:N",
        scale=alt.Scale(domain=["humans", "language models"], range=["#4c78a8", "#e45756"]),
        legend=alt.Legend(title=None, orient="bottom"),
    ),
)
# the axis spans the data (a "nice" log axis would run on to the next power of ten)
extent = sel[["perplexity", "perplexity_low", "perplexity_high", "true_perplexity"]].stack()
xscale = alt.Scale(type="log", nice=False, domain=[float(extent.min()) / 1.15, float(extent.max()) * 1.15])
bars = base.mark_errorbar(ticks=True).encode(
    x=alt.X("perplexity_low:Q", scale=xscale, title="per-token perplexity (log scale)"), x2="perplexity_high:Q"
)
points = base.mark_point(filled=True, size=70).encode(
    x=alt.X("perplexity:Q", scale=xscale),
    tooltip=[
        alt.Tooltip("row:N", title="predictor"),
        alt.Tooltip("perplexity:Q", format=".1f"),
        alt.Tooltip("perplexity_low:Q", format=".1f", title="low"),
        alt.Tooltip("perplexity_high:Q", format=".1f", title="high"),
        alt.Tooltip("lh_minus_lg_nats:Q", format=".3f", title="L_h - L_G (nats)"),
        alt.Tooltip("n_questions:Q", title="questions"),
        alt.Tooltip("n_answers:Q", title="answers"),
    ],
)
stars = (
    alt.Chart(sel[sel["true_perplexity"].notna()])
    .mark_point(shape="diamond", size=90, color="#888888", filled=False)
    .encode(
        y=y,
        x=alt.X("true_perplexity:Q", scale=xscale),
        tooltip=[
            alt.Tooltip("row:N", title="predictor"),
            alt.Tooltip("true_perplexity:Q", format=".1f", title="true perplexity"),
        ],
    )
)
lg = sel.iloc[0]
charts.show(
    (bars + points + stars).properties(height=300),
    "Per-token perplexity of humans and language models",
    "Estimated per-token perplexity (log scale) of the humans and of each language model on the same "
    "questions, with its uncertainty bars and, as open diamonds, each model's true perplexity.",
    subtitle=f"{SUBSETS[subset]}; lower is better",
)
st.caption(
    f"Dots: estimated perplexity exp(L_G + (L_h - L_G)), where L_h is the predictor's loss (mean surprisal, "
    f"nats per token) and L_G the generator's; bars: {METHODS[method]}; open diamonds: a model's "
    f"true perplexity on the same questions. L_G = {lg['lg_nats']:.3f} nats "
    f"({'the generator GPT-2 small on the same questions' if lg['lg_source'] == 'same_questions' else 'user-supplied (dbt var pairwise_lg_nats)'})."
)

table = sel.sort_values("row", key=lambda s: s.map({r: i for i, r in enumerate(ORDER)}))[
    [
        "row",
        "n_questions",
        "n_answers",
        "n_players",
        "lh_minus_lg_nats",
        "sigma_nats",
        "perplexity",
        "perplexity_low",
        "perplexity_high",
        "true_perplexity",
    ]
]
labels.frame(
    table,
    title="Perplexity of humans and models in the pairwise game",
    column_config={
        "row": "predictor",
        "n_questions": "questions",
        "n_answers": "answers",
        "n_players": "players",
        "lh_minus_lg_nats": ("L_h - L_G (nats)", "%.3f"),
        "sigma_nats": ("sigma (nats)", "%.3f"),
        "perplexity": ("perplexity", "%.1f"),
        "perplexity_low": ("low", "%.1f"),
        "perplexity_high": ("high", "%.1f"),
        "true_perplexity": ("true perplexity", "%.1f"),
    },
)

st.subheader("How this is estimated")
st.markdown("""
People cannot write down a probability for each of 50,000 tokens, so the game asks something easier. You see a
text and two candidate next tokens: the real one (y) and one drawn from a language model, the *generator*
(GPT-2 small). You say how likely it is that y is the real one, p. That answer tells us how much more likely
you find the other token than the real one: r = (1 − p) / p.

For each text, many players each see a different generated token x. Averaging r, weighted by how often the
generator proposes each x (g(y)/g(x)), gives how much less probability you put on the real token than the
generator did (equation 4). Averaging the log of that over all texts gives the difference between your loss
and the generator's, **L_h − L_G** (equation 5). Adding the generator's own loss L_G gives your loss, and
perplexity = exp(loss): the number of equally likely tokens you are, in effect, choosing from.

Language models are put through exactly the same procedure using their own probabilities, either exactly or
rounded to the buttons the players had. The generator playing against itself gets exactly its true perplexity.

**Known bias.** With only a handful of answered samples per text (here about 10 to 20), the average in
equation 4 misses rare but heavy terms, so the estimate is too *low*: it underestimates the loss, and more so
the further a predictor is from the generator (compare the 2-layer model's estimate with its true value). The
bootstrap, which uses only half of the players, shows the same effect: fewer samples, lower estimates.
Human numbers are therefore, if anything, flattering to humans.
""")

labels.related(
    [
        ("app_pages/top1.py", "Top-1 game: how often people and models guess the next token"),
        ("app_pages/perplexity.py", "Perplexity of the language models on every corpus"),
        ("app_pages/scoreboard.py", "Scoreboard: humans against the best model on every measure"),
    ]
)
