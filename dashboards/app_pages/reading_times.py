"""Reading times (Oh & Schuler 2024; Hao et al. 2020): how well each model's surprisal explains how long people
read each word.

Reads only the published snapshot's `mart_delta_loglik` (ΔLL per model with intervals),
`mart_perplexity_vs_delta_loglik` (with each model's PNC), `mart_delta_loglik_wt_vs_lw`, `mart_surprisal_effect_shape`,
`mart_anticipation_delta_loglik` (entropy), `mart_temperature_delta_loglik` (temperature-scaled surprisal) and
`mart_reading_vs_published`; computes no metric: it filters, orders, scales to x100 for reading and formats.
"""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

import charts
import data
import labels
import url_state
from predictabase.ingest.corpus_declarations import DEFAULT_MEASURES, MEASURE_LABELS

DLL = "mart_delta_loglik"
PPL = "mart_perplexity_vs_delta_loglik"
WTLW = "mart_delta_loglik_wt_vs_lw"
SHAPE = "mart_surprisal_effect_shape"
PUBLISHED = "mart_reading_vs_published"
ANTICIPATION = "mart_anticipation_delta_loglik"
TEMPERATURE = "mart_temperature_delta_loglik"
#: the anticipation comparisons in words, in the order the chart lists them
ANTICIPATION_COMPARISONS = {
    "surprisal": "surprisal, over the baseline",
    "first_token_added": "first-token entropy added to surprisal",
    "mc_added": "word entropy (Monte Carlo) added to surprisal",
    "renyi_added": "Rényi entropy added to surprisal",
    "mc_vs_first_token": "word entropy instead of first-token entropy, both with surprisal",
    "first_token_replaces": "first-token entropy in place of surprisal",
    "mc_replaces": "word entropy in place of surprisal",
    "renyi_replaces": "Rényi entropy in place of surprisal",
}
MEASURES = {m: full for m, (full, _short) in MEASURE_LABELS.items()}  # declared order and names for people
METHODS = {
    "cv_means": "cross-validated, per-word means (default)",
    "readers": "cross-validated, every reader's times with a reader intercept",
    "lmer": "Oh & Schuler's (2024) mixed model in R (lme4), in sample",
}
DEFINITIONS = {"wt": "whitespace-trailing (WT, Oh & Schuler 2024)", "lw": "leading-whitespace (LW, common practice)"}
DLL_AXIS = "ΔLL (10⁻² nats per word)"
#: the published statistics of mart_reading_vs_published, in words (the studies' own column names otherwise)
STATISTICS = {
    "delta_loglik_nats_per_word": "ΔLL (nats per word)",
    "llik": "log-likelihood with the surprisal term (nats)",
    "llik_baseline": "log-likelihood of the baseline model (nats)",
    "b": "the surprisal coefficient",
    "pearson_r_with_cloze_surprisal": "correlation with cloze surprisal",
    "D_ll_cv": "cross-validated ΔLL (nats)",
    "ll_cv_model": "cross-validated log-likelihood (nats)",
    "ll_sd": "standard error of the cross-validated ΔLL (nats)",
}
FAMILY = "model family"
TABLEAU10 = [
    "#4c78a8",
    "#f58518",
    "#e45756",
    "#72b7b2",
    "#54a24b",
    "#eeca3b",
    "#b279a2",
    "#ff9da6",
    "#9d755d",
    "#bab0ac",
]


def family_color(families, shown) -> alt.Color:
    """The model-family colour, the same family in the same colour in every chart of the page (each chart's own
    domain gave a family another colour from chart to chart): the domain is every family of mart_delta_loglik,
    sorted, "other" last; the legend lists only the families `shown` in the chart (the others had entries with no
    point)."""
    every = sorted(set(families) - {"other"}) + ["other"]
    here = [f for f in every if f in set(shown)]
    return alt.Color(
        "family:N",
        title=FAMILY,
        legend=alt.Legend(orient="bottom", values=here),
        scale=alt.Scale(domain=every, range=[TABLEAU10[i % 10] for i in range(len(every))]),
    )


def x100(v) -> str:
    return "—" if v is None or pd.isna(v) else f"{100 * v:.2f}"


def and_join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def corpora_with_cloze() -> list[str]:
    """The names of the corpora with cloze norms: the snapshot's mart_corpora, else ingest/corpora.toml's."""
    corpora = data.table(labels.CORPORA_MART)
    if corpora is not None and {"corpus", "has_cloze"} <= set(corpora.columns):
        keys = corpora.loc[corpora["has_cloze"].fillna(False).astype(bool), "corpus"]
    else:
        from predictabase.ingest import corpus_table

        keys = corpus_table.CLOZE
    return [labels.corpus_name(c) for c in labels.sorted_corpora(keys)]


def pval(p) -> str:
    return "—" if p is None or pd.isna(p) else ("< 0.002" if p < 0.002 else f"{p:.3f}")


st.title("Reading times")
finding_slot = st.empty()  # the finding, filled in once the selection is known
dll = data.page_table(
    DLL,
    f"No reading-time regressions yet ({DLL} is empty): ingest the reading corpora and "
    "word frequencies, score a model, then `predictabase build`.",
)
ok = dll[dll["status"] == "ok"].copy()
if ok.empty:
    st.info(f"{DLL} has rows but no fitted regression: {dll['status'].iloc[0]}.")
    st.stop()

corpora = labels.sorted_corpora(ok["corpus"])  # the shipped corpora first, then a user's, by name
c1, c2 = st.columns(2)  # two rows: the options' long names stay whole
c3, c4 = st.columns(2)
corpus = url_state.selectbox(
    "Corpus", corpora, format_func=labels.corpus_name, key="rt_corpus", param="corpus", where=c1
)
measures = [m for m in MEASURES if m in set(ok.loc[ok["corpus"] == corpus, "measure"])]
measure = url_state.selectbox(
    "Reading measure",
    measures,
    format_func=MEASURES.get,
    key="rt_measure",
    param="measure",
    where=c2,
    default=next((m for m in DEFAULT_MEASURES if m in measures), None),
)
methods = [m for m in METHODS if m in set(ok.loc[(ok["corpus"] == corpus) & (ok["measure"] == measure), "method"])]
method = url_state.selectbox(
    "Regression", methods, format_func=METHODS.get, key="rt_method", param="regression", where=c3
)
definition = url_state.selectbox(
    "Word surprisal", DEFINITIONS, format_func=DEFINITIONS.get, key="rt_definition", param="definition", where=c4
)

view = ok[(ok["corpus"] == corpus) & (ok["measure"] == measure) & (ok["method"] == method)]
# each run with the chosen definition; a run that has only LW (GPT-3, de Varda's UCL imports) with its LW
ALL_FAMILIES = set(view["model_family"].fillna("other")) | {"other"}
shown = (
    view.assign(chosen=view["definition"] == definition)
    .sort_values("chosen", ascending=False)
    .drop_duplicates("run_id")
)
only_lw = sorted(shown.loc[~shown["chosen"], "model_name"].fillna(shown["model_key"]))
shown = shown.assign(
    model=shown["model_name"].fillna(shown["model_key"]),
    family=shown["model_family"].fillna("other"),
    dll=100 * shown["delta_loglik_nats_per_row"],
    lo=100 * shown["delta_loglik_ci_low_nats_per_row"],
    hi=100 * shown["delta_loglik_ci_high_nats_per_row"],
).sort_values(["n_parameters", "model"], na_position="last")

# ------------------------------------------------------------------ the finding, in one sentence
best, worst = shown.loc[shown["dll"].idxmax()], shown.loc[shown["dll"].idxmin()]
n_sig = int((shown["p_value"] < 0.05).sum()) if method != "lmer" else None
unit = "nats per word" if method == "cv_means" else "nats per reading"
finding_slot.markdown(
    f"**On {labels.corpus_name(corpus)} ({MEASURES[measure]}), adding a model's surprisal to word length and "
    f"frequency improves the prediction of reading times for "
    + (f"{n_sig} of {len(shown)} models (p < 0.05)" if n_sig is not None else f"all {len(shown)} models")
    + f": most for {best['model']} ({x100(best['delta_loglik_nats_per_row'])} × 10⁻² {unit}), least for "
    f"{worst['model']} ({x100(worst['delta_loglik_nats_per_row'])} × 10⁻² {unit})"
    # a ranking the intervals do not support is a tie
    + (
        ", though their 95% intervals overlap: the models are not told apart"
        if len(shown) > 1 and pd.notna(best["lo"]) and pd.notna(worst["hi"]) and best["lo"] <= worst["hi"]
        else ""
    )
    + ".**"
)
if only_lw and definition == "wt":
    st.caption(f"{', '.join(only_lw)}: leading-whitespace surprisal only (no boundary probabilities upstream).")
st.caption(
    "ΔLL (delta log-likelihood; Hao, Mendelsohn, Sterneck, Martinez & Frank, *Probabilistic Predictions of People Perusing: Evaluating Metrics of Language Model Performance for Psycholinguistic Modeling*, CMCL 2020): the gain in "
    "held-out log-likelihood of reading times, i.e. how much better a regression of reading times predicts held-out words "
    "when it knows the model's surprisal of the word and of the 3 words before it, beyond word length and "
    "frequency; higher is better, 0 = no help. Intervals: 95% over the 10 cross-validation folds. "
    "Skipped words never count as 0 ms."
)

# ------------------------------------------------------------------ ΔLL per model
st.subheader("ΔLL per model")
# each chart's data once, on its layer, and only the columns it draws: on every mark, Altair compared the frames
# by their printed text, and the browser received the whole mart row again for each mark
base = alt.Chart().encode(
    y=alt.Y("model:N", sort=list(shown["model"]), title="model (smallest first)", axis=alt.Axis(labelLimit=400)),
    color=family_color(ALL_FAMILIES, shown["family"]),
    tooltip=[
        alt.Tooltip("model:N", title="model"),
        alt.Tooltip("dll:Q", title=DLL_AXIS, format=".2f"),
        alt.Tooltip("lo:Q", title="95% interval low", format=".2f"),
        alt.Tooltip("hi:Q", title="95% interval high", format=".2f"),
        alt.Tooltip("p_value:Q", title="permutation p", format=".3f"),
        alt.Tooltip("n_rows:Q", title="rows in the regression"),
        alt.Tooltip("definition:N", title="word surprisal (lw / wt)"),
    ],
)
points = base.mark_point(filled=True, size=80).encode(x=alt.X("dll:Q", title=DLL_AXIS))
bars = base.mark_rule().encode(x="lo:Q", x2="hi:Q")
charts.show(
    alt.layer(
        bars,
        points,
        data=shown[["model", "family", "dll", "lo", "hi", "p_value", "n_rows", "definition"]],
    ).properties(height=max(200, 26 * len(shown))),
    f"ΔLL per model (10⁻² {unit}), {labels.corpus_name(corpus)}, {MEASURES[measure]}",
    f"For each model, how much its surprisal improves the prediction of {MEASURES[measure]} on "
    f"{labels.corpus_name(corpus)} (ΔLL, 10⁻² nats), with 95% intervals over folds; higher is better.",
    subtitle="higher is better; lines: 95% intervals over folds",
)
st.caption(
    "Each point is one model's ΔLL in 10⁻² nats per word; the line through it its 95% interval over folds; "
    "colour = model family."
)

# ------------------------------------------------------------------ Hao et al. 2020, Figure 1: PNC and perplexity vs ΔLL
st.subheader("Is a better language model a better model of reading?")
ppl = data.rows(PPL, where={"corpus": corpus, "measure": measure, "definition": definition})
if ppl is not None and not ppl.empty:
    ppl = ppl.assign(
        model=ppl["model_name"].fillna(ppl["model_key"]),
        family=ppl["model_family"].fillna("other"),
        dll=100 * ppl["delta_loglik_nats_per_word"],
        size_m=ppl["n_parameters"] / 1e6,
    )
    # the two scatters one under the other, each the column's width: side by side, their legends were cut
    scatter = (
        alt.Chart(ppl[["model", "family", "dll", "size_m", "word_perplexity", "pnc_pearson_r"]])
        .mark_circle(opacity=0.85)
        .encode(
            y=alt.Y("dll:Q", title=DLL_AXIS),
            color=family_color(ALL_FAMILIES, ppl["family"]),
            size=alt.Size(
                "size_m:Q",
                title="parameters (millions)",
                scale=alt.Scale(type="log"),
                # grey swatches: the default black ones vanished on a dark theme
                # listed downwards: across, its symbols ran past a 480 px column and were cut
                legend=alt.Legend(
                    orient="bottom", direction="vertical", symbolFillColor="#888888", symbolStrokeColor="#888888"
                ),
            ),
            tooltip=[
                alt.Tooltip("model:N", title="model"),
                alt.Tooltip("size_m:Q", title="parameters (millions)", format=",.0f"),
                alt.Tooltip("word_perplexity:Q", title="word perplexity", format=".1f"),
                alt.Tooltip("pnc_pearson_r:Q", title="PNC (Pearson r)", format=".3f"),
                alt.Tooltip("dll:Q", title=DLL_AXIS, format=".2f"),
            ],
        )
    )
    charts.show(
        scatter.encode(
            x=alt.X(
                "word_perplexity:Q",
                scale=alt.Scale(type="log", zero=False),
                title="word perplexity over the regression's words (log scale)",
            )
        ).properties(height=320),
        "Word perplexity vs ΔLL (10⁻² nats per word)",
        "Each model as a point: its word perplexity over the regression's words (log scale) against its ΔLL "
        "for reading times; point size is the number of parameters.",
        subtitle="cross-validated, per-word means",
    )
    st.caption(
        "Word-level perplexity of each model over exactly the words of its regression, against its ΔLL; "
        "point size = number of parameters."
    )
    if ppl["pnc_pearson_r"].notna().any():
        charts.show(
            scatter.encode(
                x=alt.X("pnc_pearson_r:Q", title="PNC: Pearson r with cloze surprisal", scale=alt.Scale(zero=False))
            ).properties(height=320),
            "PNC vs ΔLL (10⁻² nats per word)",
            "Each model as a point: the correlation of its word surprisal with people's cloze surprisal (PNC) "
            "against its ΔLL for reading times; point size is the number of parameters.",
            subtitle="cross-validated, per-word means",
        )
        st.caption(
            "PNC (predictability norm correlation, Hao et al. 2020): the Pearson correlation of the "
            "model's word surprisal with people's cloze surprisal."
        )
    else:
        with_cloze = corpora_with_cloze()
        st.info(
            f"{labels.corpus_name(corpus)} has no cloze norms, so no PNC"
            + (f" ({and_join(with_cloze)} {'has' if len(with_cloze) == 1 else 'have'})." if with_cloze else ".")
        )

# ------------------------------------------------------------------ WT vs LW (Oh & Schuler 2024)
st.subheader("Whitespace-trailing vs leading-whitespace word surprisal")
wl = data.rows(WTLW, where={"corpus": corpus, "measure": measure, "method": method})
if wl is None or wl.empty:
    st.info("No model here has both word-surprisal definitions.")
else:
    names = ok.drop_duplicates("model_key").set_index("model_key")["model_name"]
    wl = wl.assign(
        model=wl["model_key"].map(names).fillna(wl["model_key"]),
        diff=100 * wl["wt_minus_lw_nats_per_row"],
        lo=100 * wl["wt_minus_lw_ci_low_nats_per_row"],
        hi=100 * wl["wt_minus_lw_ci_high_nats_per_row"],
        better=wl["wt_fits_better"].map({True: "WT fits better", False: "LW fits better"}),
    )
    n_wt = int(wl["wt_fits_better"].sum())
    n_sig = int((wl["p_value"] < 0.05).sum())
    st.markdown(
        f"WT surprisal fits these reading times better for {n_wt} of {len(wl)} models; the difference is "
        + ("significant (p < 0.05) for none of them." if n_sig == 0 else f"significant (p < 0.05) for {n_sig} of them.")
    )
    enc = alt.Chart().encode(
        y=alt.Y("model:N", title="model", axis=alt.Axis(labelLimit=400)),
        color=alt.Color(
            "better:N",
            title="which fits better",
            scale=alt.Scale(domain=["WT fits better", "LW fits better"], range=["#4c78a8", "#e45756"]),
            legend=alt.Legend(orient="bottom", direction="vertical"),
        ),
        tooltip=[
            alt.Tooltip("model:N", title="model"),
            alt.Tooltip("diff:Q", title="ΔLL(WT) − ΔLL(LW), 10⁻² nats", format=".3f"),
            alt.Tooltip("p_value:Q", title="paired permutation p", format=".3f"),
        ],
    )
    chart = charts.intervals_along_x(
        enc, "diff", "lo", "hi", "ΔLL(WT) − ΔLL(LW) (10⁻² nats per row)", "no difference",
        wl[["model", "better", "diff", "lo", "hi", "p_value"]],
    )  # fmt: skip
    charts.show(
        chart.properties(height=max(180, 24 * len(wl))),
        "ΔLL of WT minus ΔLL of LW (10⁻² nats per row)",
        "For each model, how much better whitespace-trailing (WT) surprisal explains reading times than "
        "leading-whitespace (LW) surprisal, with a 95% interval; right of the dashed zero line WT fits better.",
        subtitle="paired over the same folds; positive: WT fits better",
    )
    st.caption(
        "Positive: the whitespace-trailing correction (Oh & Schuler, *Leading Whitespaces of Language Models' "
        "Subword Vocabulary Pose a Confound for Calculating Word Probabilities*, EMNLP 2024, eqs. 5–6) makes surprisal explain reading "
        "times better; the line is a 95% interval over the same folds."
    )

# ------------------------------------------------------------------ the linking function
st.subheader("Reading time by surprisal")
runs = shown[["run_id", "model"]].drop_duplicates()
run = url_state.selectbox(
    "Model", runs["run_id"], format_func=dict(zip(runs["run_id"], runs["model"])).get, key="rt_shape_run", param="run"
)
shape = data.rows(SHAPE, where={"corpus": corpus, "measure": measure, "run_id": run})
if shape is not None and not shape.empty:
    shape = shape.assign(word_surprisal=shape["definition"].map({"wt": "WT", "lw": "LW"}))
    enc = alt.Chart().encode(
        x=alt.X("mean_surprisal_bits:Q", title="word surprisal (bits)"),
        # the legend draws the lines' colour at full strength (the band's 0.2 opacity made the swatches nearly
        # invisible, on a dark theme above all)
        color=alt.Color(
            "word_surprisal:N",
            title="word surprisal",
            legend=alt.Legend(orient="bottom", symbolType="stroke", symbolOpacity=1, symbolStrokeWidth=3),
        ),
    )
    band = enc.mark_area(opacity=0.2).encode(
        y=alt.Y("mean_rt_ci_low_ms:Q", title="mean reading time (ms)"), y2="mean_rt_ci_high_ms:Q"
    )
    line = enc.mark_line(point=True).encode(
        y="mean_rt_ms:Q",
        tooltip=[
            alt.Tooltip("bin_low_bits:Q", title="bin from (bits)"),
            alt.Tooltip("n_words:Q", title="words"),
            alt.Tooltip("mean_rt_ms:Q", title="mean reading time (ms)", format=".1f"),
        ],
    )
    charts.show(
        alt.layer(
            band,
            line,
            data=shape[
                [
                    "mean_surprisal_bits",
                    "word_surprisal",
                    "mean_rt_ms",
                    "mean_rt_ci_low_ms",
                    "mean_rt_ci_high_ms",
                    "bin_low_bits",
                    "n_words",
                ]
            ],
        ).properties(height=320),
        f"Mean {MEASURES[measure]} (ms) per 1-bit surprisal bin",
        f"Mean {MEASURES[measure]} in milliseconds of the words in each 1-bit bin of word surprisal under "
        "the chosen model, for WT and LW surprisal, with 95% intervals as bands.",
        subtitle=f"{labels.corpus_name(corpus)}; bands: 95% intervals over words",
    )
    st.caption(
        "Each point: the words whose surprisal falls in a 1-bit bin, their mean reading time; band = 95% "
        "interval over words. A straight rising line is the linear link surprisal theory predicts."
    )

# ------------------------------------------------------------------ anticipation (Pimentel et al. 2023)
st.subheader("Anticipation: does the next word's entropy help?")
ant = data.rows(ANTICIPATION, where={"corpus": corpus, "measure": measure})
if ant is None or ant.empty:
    st.info(
        f"No word entropies for {labels.corpus_name(corpus)} yet: estimate them with `predictabase entropy -c {corpus}` "
        "(or `entropy = true` for a model in models.toml, then `predictabase refresh`), then `predictabase build`."
    )
else:
    names = ok.drop_duplicates("model_key").set_index("model_key")["model_name"]
    ant = ant[ant["comparison"].isin(list(ANTICIPATION_COMPARISONS))].assign(
        model=lambda f: f["model_key"].map(names).fillna(f["model_key"]),
        comparison_label=lambda f: f["comparison"].map(ANTICIPATION_COMPARISONS),
        dll=lambda f: 100 * f["delta_loglik_nats_per_word"],
        lo=lambda f: 100 * f["delta_loglik_ci_low_nats_per_word"],
        hi=lambda f: 100 * f["delta_loglik_ci_high_nats_per_word"],
    )
    head = ant[ant["comparison"] == "mc_vs_first_token"].sort_values("model").iloc[0]
    verdict = "more than" if head["lo"] > 0 else "less than" if head["hi"] < 0 else "no more, within its interval, than"
    st.markdown(
        f"For {head['model']}, a word's own entropy (Monte Carlo over whole words, {int(head['n_samples'])} samples "
        f"a word) says {verdict} its first-token stand-in about {MEASURES.get(measure, measure)}: "
        f"{head['dll']:+.2f} × 10⁻² nats per word [{head['lo']:.2f}, {head['hi']:.2f}] over {int(head['n_words']):,} "
        f"words. The word's entropy averages {head['mean_mc_entropy_nats']:.2f} nats against "
        f"{head['mean_first_token_entropy_nats']:.2f} for the first token."
    )
    enc = alt.Chart().encode(
        y=alt.Y(
            "comparison_label:N",
            title=None,
            sort=list(ANTICIPATION_COMPARISONS.values()),
            axis=alt.Axis(labelLimit=400),
        ),
        color=alt.Color("model:N", title="model", legend=alt.Legend(orient="bottom", direction="vertical")),
        tooltip=[
            alt.Tooltip("model:N", title="model"),
            alt.Tooltip("comparison_label:N", title="comparison"),
            alt.Tooltip("dll:Q", title="ΔLL, 10⁻² nats per word", format=".3f"),
            alt.Tooltip("p_value:Q", title="sign-flip p", format=".3f"),
        ],
    )
    chart = charts.intervals_along_x(
        enc, "dll", "lo", "hi", "ΔLL (10⁻² nats per word)", "no gain",
        ant[["model", "comparison_label", "dll", "lo", "hi", "p_value"]],
    )  # fmt: skip
    charts.show(
        chart.properties(height=max(200, 26 * len(ANTICIPATION_COMPARISONS))),
        "What entropy adds to surprisal, or does in its place (10⁻² nats per word)",
        "For each comparison, the held-out log-likelihood gain of the regression of per-word mean reading times, "
        "with a 95% interval over words; right of the dashed zero line the first design fits better.",
        subtitle="per-word means; 10 folds of words; intervals over words",
    )
    st.caption(
        "First-token entropy: the next-token entropy where the word starts, the usual stand-in. Word entropy: the "
        "word's own entropy, estimated from whole words sampled up to the next word boundary (Clark, Oh & Schuler "
        "2025). Rényi entropy: its generalisation of order α (Pimentel et al. 2023, *On the effect of anticipation "
        "on reading times*). Each adds the word's and its three previous words' values."
    )

# ------------------------------------------------------------------ temperature-scaled surprisal (Liu et al. 2024)
st.subheader("Temperature: would a flatter distribution fit reading better?")
temp = data.rows(TEMPERATURE, where={"corpus": corpus, "measure": measure})
if temp is None or temp.empty:
    st.info(
        f"No temperature-scaled surprisal for {labels.corpus_name(corpus)} yet: score it with `predictabase "
        f"temperature -c {corpus}` (the main job does, with the default model), then `predictabase build`."
    )
else:
    names = ok.drop_duplicates("model_key").set_index("model_key")["model_name"]
    temp = temp.assign(
        model=lambda f: f["model_key"].map(names).fillna(f["model_key"]),
        dll=lambda f: 100 * f["delta_loglik_nats_per_word"],
        lo=lambda f: 100 * f["delta_loglik_ci_low_nats_per_word"],
        hi=lambda f: 100 * f["delta_loglik_ci_high_nats_per_word"],
    )
    for key, run in temp.sort_values("model").groupby("model", sort=False):
        head = run.iloc[0]
        gain, g_lo, g_hi = (100 * head[c] for c in ("cv_gain_nats_per_word", "cv_gain_ci_low_nats_per_word",
                                                     "cv_gain_ci_high_nats_per_word"))  # fmt: skip
        t, t_lo, t_hi = head["best_temperature"], head["best_temperature_ci_low"], head["best_temperature_ci_high"]
        verdict = (
            "a flatter distribution than the model's own predicts reading times better"
            if t_lo > 1 and g_lo > 0
            else "a sharper distribution than the model's own predicts reading times better"
            if t_hi < 1 and g_lo > 0
            else "the model's own distribution (T = 1) is as good as any, within the intervals"
        )
        st.markdown(
            f"For {key} on {MEASURES.get(measure, measure)}, {verdict}: surprisal fits best at T = {t:g} "
            f"(95% bootstrap interval {t_lo:g} to {t_hi:g}), and choosing T on other words than it is scored on gains "
            f"{gain:+.2f} × 10⁻² nats per word [{g_lo:.2f}, {g_hi:.2f}] over T = 1, over {int(head['n_words']):,} words."
        )
    multi = temp["model"].nunique() > 1
    base = alt.Chart().encode(
        x=alt.X(
            "temperature:Q",
            title="temperature T (logits divided by T; log scale)",
            scale=alt.Scale(type="log", domain=[temp["temperature"].min(), temp["temperature"].max()], nice=False),
            axis=alt.Axis(values=sorted(temp["temperature"].unique()), format="g", labelOverlap=True),
        ),
        color=alt.Color("model:N", title="model", legend=alt.Legend(orient="bottom", direction="vertical"))
        if multi
        else alt.value("#4c78a8"),
        tooltip=[
            alt.Tooltip("model:N", title="model"),
            alt.Tooltip("temperature:Q", title="temperature T", format="g"),
            alt.Tooltip("dll:Q", title="ΔLL, 10⁻² nats per word", format=".3f"),
            alt.Tooltip("lo:Q", title="95% interval low", format=".3f"),
            alt.Tooltip("hi:Q", title="95% interval high", format=".3f"),
        ],
    )
    one = (
        alt.Chart(pd.DataFrame({"t": [1.0], "what": ["the model's own distribution (T = 1)"]}))
        .mark_rule(strokeDash=[4, 4], color="#888888")
        .encode(
            x="t:Q",
            strokeDash=alt.StrokeDash("what:N", title=None, legend=alt.Legend(orient="bottom", labelLimit=400)),
        )
    )
    chart = alt.layer(
        base.mark_rule().encode(y=alt.Y("lo:Q", title=DLL_AXIS), y2="hi:Q"),
        base.mark_line(strokeWidth=1.5).encode(y="dll:Q"),
        base.mark_point(filled=True, size=60).encode(
            y="dll:Q",
            shape=alt.Shape("best:N", scale=alt.Scale(domain=["best T", "other T"], range=["square", "circle"]),
                            legend=None),
        ),
        one,
        data=temp.assign(best=temp["is_best"].map({True: "best T", False: "other T"}))[
            ["model", "temperature", "dll", "lo", "hi", "best"]
        ],
    ).properties(height=300)  # fmt: skip
    charts.show(
        chart,
        f"ΔLL of {MEASURES.get(measure, measure)} by temperature (10⁻² nats per word)",
        "For each temperature T, how much the word surprisal under softmax(logits / T) improves the prediction of "
        "per-word mean reading times beyond length and frequency, with a 95% interval over words; the dashed line "
        "is the model's own distribution.",
        subtitle="higher is better; the best T drawn as a square; lines: 95% intervals over words",
    )
    st.caption(
        "Temperature scaling (Liu, Škrjanec & Demberg 2024, *Temperature-scaling surprisal estimates improve fit to "
        "human reading times*): the logits are divided by T before the softmax; T > 1 flattens the distribution, "
        "T < 1 sharpens it. Whitespace-trailing word surprisal with the boundary probability under the same T. The "
        "best T's interval is over 2,000 bootstrap resamples of the words; the gain of choosing T is scored on each "
        "fold's words at the T best on the other folds', so it is not chosen on the words it is measured on."
    )

# ------------------------------------------------------------------ ours vs published
st.subheader("Our numbers next to the published ones")
pub = data.table(PUBLISHED)
if pub is None or pub.empty:
    st.info(f"{PUBLISHED} is empty: ingest pimentel_meister_* and ucl_published_* and build.")
else:
    pub = pub.assign(
        statistic=pub["statistic"].map(lambda s: STATISTICS.get(s, s)),
        corpus=pub["corpus"].map(labels.corpus_name),
        predictor=pub["predictor"].map(labels.model_name),
        measure=pub["measure"].map(lambda m: MEASURES.get(m, m)),
    )
    summary = pub.groupby(["study", "statistic"], as_index=False).agg(rows=("agrees", "size"), agree=("agrees", "sum"))
    st.markdown(
        "; ".join(f"{r.study}, {r.statistic}: {int(r.agree)} of {int(r.rows)} agree" for r in summary.itertuples())
        + "."
    )
    labels.show(
        pub[
            [
                "study",
                "corpus",
                "measure",
                "predictor",
                "definition",
                "statistic",
                "ours",
                "published",
                "abs_difference",
                "tolerance",
                "agrees",
            ]
        ],
        title="Our numbers next to the published ones",
    )

labels.related(
    [
        ("app_pages/perplexity.py", "Perplexity: does a lower perplexity mean a better fit?"),
        ("app_pages/word_surprisal.py", "Word surprisal: leading-whitespace (LW) vs whitespace-trailing (WT)"),
        ("app_pages/next_word.py", "Humans vs models: next word (the cloze norms behind PNC)"),
        ("app_pages/scoreboard.py", "Scoreboard: humans against the best model on every measure"),
    ]
)
