"""Languages: how well models' surprisal explains reading in MECO's 11 languages (Wilcox, Pimentel,
Meister, Cotterell & Levy 2023; Siegelman et al. 2022), whether the link is linear, and anticipation.

Reads only the published snapshot's `mart_xlang_delta_loglik` (ΔLL by their procedure, with the entropy
comparisons), `mart_xlang_model_summary` (its counts and means over the languages), `mart_link_shape` (linear vs GAM), `mart_link_curves` (the fitted curves, theirs beside ours),
`mart_anticipation_delta_loglik` (our Monte-Carlo word entropies), `mart_temperature_delta_loglik` (the best
temperature of surprisal) and `mart_words_export` (a text in its script); computes no metric: it filters, orders, scales to x100 and formats.
"""

from __future__ import annotations

import html

import altair as alt
import pandas as pd
import streamlit as st

import charts
import data
import labels
import url_state
from predictabase.ingest.corpus_declarations import DEFAULT_MEASURES, MEASURE_LABELS

XDLL = "mart_xlang_delta_loglik"
SUMMARY = "mart_xlang_model_summary"
SHAPE = "mart_link_shape"
CURVES = "mart_link_curves"
WORDS = "mart_words_export"
ANTICIPATION = "mart_anticipation_delta_loglik"  # our entropies, Monte Carlo over whole words (`predictabase entropy`)
TEMPERATURE = "mart_temperature_delta_loglik"
PANEL_PX = 160  # one link-curve panel's plot width
#: ISO 639-1 -> the language's name in English and its script (ISO 15924)
LANGUAGES = {
    "nl": ("Dutch", "Latn"),
    "en": ("English", "Latn"),
    "fi": ("Finnish", "Latn"),
    "de": ("German", "Latn"),
    "el": ("Greek", "Grek"),
    "he": ("Hebrew", "Hebr"),
    "it": ("Italian", "Latn"),
    "ko": ("Korean", "Kore"),
    "ru": ("Russian", "Cyrl"),
    "es": ("Spanish", "Latn"),
    "tr": ("Turkish", "Latn"),
    "ar": ("Arabic", "Arab"),
    "fa": ("Persian", "Arab"),
    "ur": ("Urdu", "Arab"),
    "yi": ("Yiddish", "Hebr"),
}
RIGHT_TO_LEFT = {"Hebr", "Arab"}  # the scripts written right to left
MEASURES = {m: full for m, (full, _short) in MEASURE_LABELS.items()}  # declared order and names for people
DEFINITIONS = {"wt": "whitespace-trailing (WT, Oh & Schuler 2024)", "lw": "leading-whitespace (LW, common practice)"}
COMPARISONS = {"entropy_added": "entropy added to surprisal", "entropy_replaces": "entropy in place of surprisal"}
DLL_AXIS = "ΔLL (10⁻² nats per word)"
MODEL_ORDER = ["mgpt-sc", "mgpt-lc", "monot-30m", "monot-all"]  # theirs first, ours after
CURVE_KINDS = {
    ("ours", "linear"): "linear, ours",
    ("ours", "gam"): "GAM, ours",
    ("published", "linear"): "linear, Wilcox et al.",
    ("published", "gam"): "GAM, Wilcox et al.",
}
CURVE_COLORS = ["#4c78a8", "#54a24b", "#9ecae9", "#88d27a"]
CURVE_DASH = [[1, 0], [1, 0], [5, 3], [5, 3]]


def x100(v) -> str:
    return "—" if v is None or pd.isna(v) else f"{100 * v:.2f}"


def language(code, title) -> str:
    return LANGUAGES.get(code, (None,))[0] or title or code


def _script(code) -> str | None:
    return LANGUAGES.get(code, (None, None))[1]


def models_in_order(frame: pd.DataFrame) -> list[str]:
    names = frame.drop_duplicates("model_key").set_index("model_key")["model"]
    keys = sorted(names.index, key=lambda k: (MODEL_ORDER.index(k) if k in MODEL_ORDER else len(MODEL_ORDER), names[k]))
    return [names[k] for k in keys]


def dll_layers(view: pd.DataFrame, value: str, low: str, high: str, y_title: str) -> alt.LayerChart:
    """Points and 95% interval lines per language (x) and model (colour, side by side), a dashed zero line."""
    langs = sorted(view["language_name"].unique())
    order = models_in_order(view)
    # the data once, on the layer, and only the columns drawn: on each mark, Altair compared the frames by their
    # printed text (half the page's server time) and the browser received the whole mart row several times
    view = view[["language_name", "model", value, low, high, "n_words"]]
    enc = alt.Chart().encode(
        x=alt.X("language_name:N", sort=langs, title="language (MECO)", axis=alt.Axis(labelAngle=-30)),
        xOffset=alt.XOffset("model:N", sort=order),
        color=alt.Color(
            "model:N", sort=order, title="model", legend=alt.Legend(orient="bottom", columns=1, labelLimit=300)
        ),
        tooltip=[
            alt.Tooltip("language_name:N", title="language"),
            alt.Tooltip("model:N", title="model"),
            alt.Tooltip(f"{value}:Q", title=y_title, format=".2f"),
            alt.Tooltip(f"{low}:Q", title="95% interval low", format=".2f"),
            alt.Tooltip(f"{high}:Q", title="95% interval high", format=".2f"),
            alt.Tooltip("n_words:Q", title="words"),
        ],
    )
    zero = (
        alt.Chart(pd.DataFrame({"y": [0.0], "what": ["no improvement (0)"]}))
        .mark_rule(strokeDash=[4, 4], color="#888888")
        .encode(y="y:Q", strokeDash=alt.StrokeDash("what:N", title=None, legend=alt.Legend(orient="top-right")))
    )
    return alt.layer(
        enc.mark_rule().encode(y=alt.Y(f"{low}:Q", title=y_title), y2=f"{high}:Q"),
        enc.mark_point(filled=True, size=45).encode(y=f"{value}:Q"),
        zero,
        data=view,
    ).properties(height=340)


st.title("Languages")
finding_slot = st.empty()  # the finding, filled in once the selection is known
dll = data.page_table(
    XDLL,
    f"No MECO regressions yet ({XDLL} is empty): ingest wilcox_xlang "
    "(`predictabase ingest wilcox_xlang`), then `predictabase build`.",
)
dll = dll.assign(
    model=dll["model_name"].fillna(dll["model_key"]),
    language_name=[language(c, t) for c, t in zip(dll["language"], dll["corpus_title"])],
)
c1, c2 = st.columns(2)
measures = [m for m in MEASURES if m in set(dll["measure"])]
measure = url_state.selectbox(
    "Reading measure",
    measures,
    format_func=MEASURES.get,
    key="lang_measure",
    param="measure",
    where=c1,
    default=next((m for m in DEFAULT_MEASURES if m in measures), None),
)
definition = url_state.selectbox(
    "Our models' word surprisal",
    DEFINITIONS,
    format_func=DEFINITIONS.get,
    key="lang_definition",
    param="definition",
    where=c2,
)
sel = dll[(dll["measure"] == measure) & dll["definition"].isin(["as given", definition])]
surp = sel[sel["comparison"] == "surprisal"].assign(
    dll=lambda d: 100 * d["delta_loglik_nats_per_word"],
    lo=lambda d: 100 * d["delta_loglik_ci_low_nats_per_word"],
    hi=lambda d: 100 * d["delta_loglik_ci_high_nats_per_word"],
)

# ------------------------------------------------------------------ the finding, in one sentence
summary = data.table(SUMMARY)
summary = summary[
    (summary["measure"] == measure)
    & (summary["comparison"] == "surprisal")
    & summary["definition"].isin(["as given", definition])
]
per_model = summary.assign(model=summary["model_name"].fillna(summary["model_key"])).sort_values(
    ["n_above_zero", "mean_delta_loglik_nats_per_word", "model"], ascending=[False, False, True]
)
best, worst = per_model.iloc[0], per_model.iloc[-1]
XL = set(dll["corpus"])  # MECO's languages
shape_all = data.table(SHAPE)
# the link is fitted on one measure per corpus: MECO's gaze duration (Wilcox et al.'s one measure there), each
# other corpus's own (int_link_fits)
fitted = (
    shape_all[(shape_all["status"] == "ok") & shape_all["definition"].isin(["as given", definition])]
    if shape_all is not None
    else pd.DataFrame()
)
fitted_xl = fitted[fitted["corpus"].isin(XL)] if not fitted.empty else fitted
link = ""
if not fitted_xl.empty:
    gam_better = int((fitted_xl["gam_minus_linear_delta_loglik_ci_low_nats_per_word"] > 0).sum())
    link = (
        f" A smooth (GAM) link predicts held-out gaze durations better than a straight line in {gam_better} of "
        f"{len(fitted_xl)} language–model pairs: "
        + ("the link is close to linear." if 4 * gam_better <= len(fitted_xl) else "the link is not linear everywhere.")
    )
finding_slot.markdown(
    f"**Across MECO's {surp['corpus'].nunique()} languages, a model's surprisal improves the prediction of "
    f"{MEASURES[measure]} beyond word length and frequency: for {best['model']} in {best['n_above_zero']} of "
    f"{best['n_languages']} languages (95% intervals above 0; {x100(best['mean_delta_loglik_nats_per_word'])} × 10⁻² "
    "nats per word on average)"
    + (f", for {worst['model']} in {worst['n_above_zero']} of {worst['n_languages']}" if len(per_model) > 1 else "")
    + f".{link}**"
)
st.caption(
    "ΔLL (delta log-likelihood): how much better a regression predicts held-out words' reading times when it "
    "knows the model's surprisal of the word and the two words before, beyond their length and frequency; "
    "Wilcox et al.'s procedure (10 folds in text order, per-word means over MECO's readers). Wilcox et al.'s "
    "four models (mGPT with short and long context; monolingual models trained on 30M words or on all data) "
    "on their own rows; ours on the same words. Intervals: mean ± 1.96 standard errors over words."
)

# ------------------------------------------------------------------ ΔLL by language
st.subheader("ΔLL by language and model")
charts.show(
    dll_layers(surp, "dll", "lo", "hi", DLL_AXIS),
    f"ΔLL of {MEASURES[measure]} by language (10⁻² nats per word)",
    f"For each MECO language and model, how much the model's surprisal improves the prediction of "
    f"{MEASURES[measure]} (ΔLL, 10⁻² nats per word), with 95% intervals; above the dashed zero line it helps.",
    subtitle="higher is better; lines: 95% intervals over words",
)

# ------------------------------------------------------------------ anticipation
st.subheader("Anticipation: does entropy help?")
comparison = url_state.radio(
    "Compared with the surprisal model",
    COMPARISONS,
    format_func=COMPARISONS.get,
    key="lang_comparison",
    param="entropy",
    horizontal=True,
)
ent = sel[sel["comparison"] == comparison].assign(
    dll=lambda d: 100 * d["delta_loglik_nats_per_word"],
    lo=lambda d: 100 * d["delta_loglik_ci_low_nats_per_word"],
    hi=lambda d: 100 * d["delta_loglik_ci_high_nats_per_word"],
)
if ent.empty:
    st.info("No entropy comparison in this snapshot: rebuild it (`predictabase build`).")
else:
    counts = data.table(SUMMARY)
    counts = counts[
        (counts["measure"] == measure)
        & (counts["comparison"] == comparison)
        & counts["definition"].isin(["as given", definition])
    ]
    st.markdown(
        f"With {COMPARISONS[comparison]}, the fit is better than with surprisal alone (95% interval above 0) "
        f"in {int(counts['n_above_zero'].sum())} of {int(counts['n_languages'].sum())} language–model pairs "
        f"and worse (below 0) in {int(counts['n_below_zero'].sum())}."
    )
    charts.show(
        dll_layers(ent, "dll", "lo", "hi", "ΔLL against the surprisal model (10⁻² nats per word)"),
        f"{COMPARISONS[comparison].capitalize()}: ΔLL against surprisal alone (10⁻² nats per word)",
        f"For each language and model, the held-out log-likelihood of {MEASURES[measure]} with "
        f"{COMPARISONS[comparison]}, minus that with surprisal alone; above zero the entropy model fits "
        "better.",
        subtitle="above 0: better than surprisal alone; lines: 95% intervals",
    )
    st.caption(
        "Entropy: the model's uncertainty before the word. Wilcox et al.'s models: the sum of the next-token "
        "entropies over the word's tokens (their scripts). Ours: the next-token entropy where the word starts, "
        "exact from one softmax (the within-word entropies after the first token are not anticipation). It is "
        "the usual stand-in for the next word's entropy, not a bound on it: it also spreads over tokens that "
        "continue the previous word, such as punctuation. The word's own entropy, by Monte Carlo over whole "
        "words, is compared with it below."
    )

MODEL_NAMES = dll.drop_duplicates("model_key").set_index("model_key")["model"]
LANGUAGE_OF = {
    c: language(code, t)
    for c, code, t in dll[["corpus", "language", "corpus_title"]].drop_duplicates().itertuples(False)
}
mc = data.table(ANTICIPATION)
mc = (
    mc[mc["corpus"].isin(XL) & (mc["measure"] == measure) & (mc["comparison"] == "mc_vs_first_token")]
    if mc is not None
    else pd.DataFrame()
)
missing = len(XL) - (mc["corpus"].nunique() if not mc.empty else 0)
to_do = (
    f" {missing} of MECO's {len(XL)} languages have no Monte-Carlo word entropies yet: `predictabase entropy` estimates "
    "them (about a minute per thousand words on a CPU), then `predictabase build`."
    if missing
    else ""
)
if mc.empty:
    st.info("Our word entropies by Monte Carlo over whole words are not in this snapshot." + to_do)
else:
    mc = mc.assign(
        model=mc["model_key"].map(MODEL_NAMES).fillna(mc["model_key"]),
        language_name=mc["corpus"].map(LANGUAGE_OF),
        dll=100 * mc["delta_loglik_nats_per_word"],
        lo=100 * mc["delta_loglik_ci_low_nats_per_word"],
        hi=100 * mc["delta_loglik_ci_high_nats_per_word"],
    )
    st.markdown(
        f"Ours, with the word's own entropy (Monte Carlo over whole words) in place of the first-token stand-in, "
        f"both beside surprisal: better (95% interval above 0) in {int((mc['lo'] > 0).sum())} of {len(mc)} "
        f"language–model pairs, worse in {int((mc['hi'] < 0).sum())}.{to_do}"
    )
    charts.show(
        dll_layers(mc, "dll", "lo", "hi", "ΔLL, word entropy against first-token entropy (10⁻² nats per word)"),
        "Word entropy instead of first-token entropy (10⁻² nats per word)",
        f"For each language with our Monte-Carlo word entropies, the held-out log-likelihood of {MEASURES[measure]} "
        "with surprisal and the word's own entropy, minus that with surprisal and the first-token entropy; above "
        "zero the word's entropy says more.",
        subtitle="above 0: the word's entropy says more than its stand-in; lines: 95% intervals over words",
    )

# ------------------------------------------------------------------ temperature
st.subheader("Temperature: which distribution fits reading best?")
temp = data.table(TEMPERATURE)
temp = temp[temp["corpus"].isin(XL) & (temp["measure"] == measure) & temp["is_best"]] if temp is not None else None
if temp is None or temp.empty:
    st.info(
        "No temperature-scaled surprisal for MECO's languages in this snapshot: `predictabase temperature` scores it "
        "(the main job does, with the default model), then `predictabase build`."
    )
else:
    temp = temp.assign(
        model=temp["model_key"].map(MODEL_NAMES).fillna(temp["model_key"]),
        language_name=temp["corpus"].map(LANGUAGE_OF),
        gain=100 * temp["cv_gain_nats_per_word"],
        gain_lo=100 * temp["cv_gain_ci_low_nats_per_word"],
        gain_hi=100 * temp["cv_gain_ci_high_nats_per_word"],
    )
    flatter = int(((temp["best_temperature_ci_low"] > 1) & (temp["gain_lo"] > 0)).sum())
    sharper = int(((temp["best_temperature_ci_high"] < 1) & (temp["gain_lo"] > 0)).sum())
    st.markdown(
        f"Surprisal from a flatter distribution than the model's own (T > 1, Liu, Škrjanec & Demberg 2024) predicts "
        f"{MEASURES[measure]} better, with both intervals clear of it, in {flatter} of {len(temp)} language–model "
        f"pairs; a sharper one (T < 1) in {sharper}. The best T ranges from {temp['best_temperature'].min():g} to "
        f"{temp['best_temperature'].max():g} (median {temp['best_temperature'].median():g})."
    )
    langs = sorted(temp["language_name"].unique())
    enc = alt.Chart().encode(
        x=alt.X("language_name:N", sort=langs, title="language (MECO)", axis=alt.Axis(labelAngle=-30)),
        xOffset=alt.XOffset("model:N"),
        color=alt.Color("model:N", title="model", legend=alt.Legend(orient="bottom", columns=1, labelLimit=300)),
        tooltip=[
            alt.Tooltip("language_name:N", title="language"),
            alt.Tooltip("model:N", title="model"),
            alt.Tooltip("best_temperature:Q", title="best temperature T", format="g"),
            alt.Tooltip("best_temperature_ci_low:Q", title="95% bootstrap interval low", format="g"),
            alt.Tooltip("best_temperature_ci_high:Q", title="95% bootstrap interval high", format="g"),
            alt.Tooltip("gain:Q", title="gain over T = 1, 10⁻² nats per word", format=".2f"),
            alt.Tooltip("n_words:Q", title="words"),
        ],
    )
    one = (
        alt.Chart(pd.DataFrame({"y": [1.0], "what": ["the model's own distribution (T = 1)"]}))
        .mark_rule(strokeDash=[4, 4], color="#888888")
        .encode(
            y="y:Q",
            strokeDash=alt.StrokeDash("what:N", title=None, legend=alt.Legend(orient="bottom", labelLimit=400)),
        )
    )
    # the axis spans the intervals and T = 1, its ticks at the values drawn (a log axis of its own picks 0.3, 0.1)
    ticks = sorted(
        {1.0, *temp["best_temperature"], *temp["best_temperature_ci_low"], *temp["best_temperature_ci_high"]}
    )
    view = temp[["language_name", "model", "best_temperature", "best_temperature_ci_low", "best_temperature_ci_high",
                 "gain", "n_words"]]  # fmt: skip
    chart = alt.layer(
        enc.mark_rule().encode(
            y=alt.Y(
                "best_temperature_ci_low:Q",
                title="best temperature T (log scale)",
                scale=alt.Scale(type="log", domain=[ticks[0], ticks[-1]], nice=False),
                axis=alt.Axis(values=ticks, format="g"),
            ),
            y2="best_temperature_ci_high:Q",
        ),
        enc.mark_point(filled=True, size=45).encode(y="best_temperature:Q"),
        one,
        data=view,
    ).properties(height=300)
    charts.show(
        chart,
        f"The temperature at which surprisal predicts {MEASURES[measure]} best, by language",
        "For each MECO language, the temperature T whose surprisal (logits divided by T) gives the largest ΔLL, "
        "with a 95% bootstrap interval over words; above the dashed line a flatter distribution than the model's "
        "own fits better.",
        subtitle="lines: 95% bootstrap intervals over words; the grid runs from 0.5 to 10",
    )

# ------------------------------------------------------------------ the shape of the link
st.subheader("Is the link between surprisal and reading time linear?")
if shape_all is None or shape_all.empty:
    st.info(f"{SHAPE} is empty: build with `predictabase build --gam` (R with mgcv).")
elif fitted.empty:
    status = shape_all["status"].iloc[0]
    st.info(f"No GAM was fitted in this snapshot ({status}).")
else:
    view = fitted.assign(
        model=fitted["model_name"].fillna(fitted["model_key"]),
        language_name=[language(c, t) for c, t in zip(fitted["language"], fitted["corpus_title"])],
        gain=100 * fitted["gam_minus_linear_delta_loglik_nats_per_word"],
        lo=100 * fitted["gam_minus_linear_delta_loglik_ci_low_nats_per_word"],
        hi=100 * fitted["gam_minus_linear_delta_loglik_ci_high_nats_per_word"],
    )
    charts.show(
        dll_layers(view[view["corpus"].isin(XL)], "gain", "lo", "hi", "ΔLL(GAM) − ΔLL(linear) (10⁻² nats per word)"),
        "GAM minus linear: ΔLL of a smooth surprisal term over a straight one (10⁻² nats per word)",
        "For each language and model, how much better a smooth (GAM) surprisal term predicts held-out gaze "
        "durations than a linear one, with 95% intervals; at or below zero the straight line is as good.",
        subtitle="above 0: the smooth link predicts better; lines: 95% intervals over words",
    )
    st.caption(
        "Both regressions share a baseline of tensor-product smooths of frequency × length of the word and "
        "the previous word (mgcv through R); the linear one adds surprisal and the previous word's as straight "
        "terms, the GAM as smooths with up to 5 degrees of freedom (as in Wilcox et al.'s 2023 analysis of the link function)."
    )
    curves = data.table(CURVES)
    if curves is not None and not curves.empty:
        curves = curves[
            curves["in_data_range"].fillna(False).astype(bool) & curves["definition"].isin(["as given", definition])
        ]
        runs = view.drop_duplicates("model_key")
        keys = sorted(runs["model_key"], key=lambda k: (MODEL_ORDER.index(k) if k in MODEL_ORDER else 99, k))
        names = dict(zip(runs["model_key"], runs["model"]))
        model_key = url_state.selectbox(
            "Model for the curves",
            keys,
            format_func=names.get,
            key="lang_curve_model",
            param="curves",
            default="mgpt-lc" if "mgpt-lc" in keys else None,
        )
        cv = curves[curves["model_key"] == model_key]
        cv = cv.assign(
            curve=[CURVE_KINDS[(s, k)] for s, k in zip(cv["curve_source"], cv["link"])],
            panel=[
                language(lang, t) if c in XL else f"{t} ({MEASURE_LABELS[m][1]})"
                for c, lang, t, m in zip(cv["corpus"], cv["language"], cv["corpus_title"], cv["measure"])
            ],
        )
        panels = sorted(cv["panel"].unique())
        colour = alt.Color(
            "curve:N",
            title="curve",
            sort=list(CURVE_KINDS.values()),
            scale=alt.Scale(domain=list(CURVE_KINDS.values()), range=CURVE_COLORS),
            # two entries a row: the four in one row were 573 px, past a 480 px column
            legend=alt.Legend(orient="bottom", columns=2, symbolType="stroke", symbolStrokeWidth=3, symbolOpacity=1),
        )
        # the data once, on the facet, and only the columns drawn (as for the ΔLL charts above)
        cv = cv[["panel", "curve", "surprisal_bits", "effect_ms", "effect_low_ms", "effect_high_ms"]]
        base = alt.Chart().encode(x=alt.X("surprisal_bits:Q", title="word surprisal (bits)"), color=colour)
        band = (
            base.transform_filter(alt.datum.curve == "GAM, ours")
            .mark_area(opacity=0.2)
            .encode(y=alt.Y("effect_low_ms:Q", title="slowdown (ms)"), y2="effect_high_ms:Q")
        )
        lines = base.mark_line().encode(
            y="effect_ms:Q",
            strokeDash=alt.StrokeDash(
                "curve:N",
                sort=list(CURVE_KINDS.values()),
                legend=None,
                scale=alt.Scale(domain=list(CURVE_KINDS.values()), range=CURVE_DASH),
            ),
            tooltip=[
                alt.Tooltip("panel:N", title="corpus"),
                alt.Tooltip("curve:N", title="curve"),
                alt.Tooltip("surprisal_bits:Q", title="surprisal (bits)", format=".1f"),
                alt.Tooltip("effect_ms:Q", title="slowdown (ms)", format=".1f"),
            ],
        )
        # two panels a row: with their axes they fit a 480 px column (a 940 px window); four were 908 px wide
        grid = (
            alt.layer(band, lines)
            .properties(width=PANEL_PX, height=130)
            .facet(facet=alt.Facet("panel:N", sort=panels, title=None), columns=2, data=cv)
            .resolve_scale(y="independent")
        )
        # the model in the subtitle: in the title, a long name cut the title off the chart's right side
        charts.show(
            grid,
            "Slowdown in reading by surprisal (ms)",
            "For each corpus, the fitted effect of a word's surprisal on its reading time (MECO: gaze "
            "duration) in milliseconds relative to 0 bits: linear and GAM links, ours with a 95% band, Wilcox et al.'s "
            "published curves dashed.",
            subtitle=[names[model_key], "between the 1st and 99th percentile of the words' surprisal"],
            width="content",
        )
        st.caption(
            "Ours: one fit on all of a corpus's words, the band ± 1.96 standard errors of the surprisal term. "
            "Wilcox et al.'s (dashed, MECO only): their saved curves, fitted on the four models' rows of a "
            "language together, as their script does, so the four look alike. Drawn only where the corpus's "
            "words are (1st–99th percentile of surprisal)."
        )
    table = view[
        [
            "language_name",
            "corpus_title",
            "measure",
            "model",
            "definition",
            "n_words",
            "linear_delta_loglik_nats_per_word",
            "gam_delta_loglik_nats_per_word",
            "gam_minus_linear_delta_loglik_nats_per_word",
            "gam_minus_linear_delta_loglik_ci_low_nats_per_word",
            "gam_minus_linear_delta_loglik_ci_high_nats_per_word",
            "gam_minus_linear_p_value",
            "gam_surprisal_edf",
        ]
    ].sort_values(["language_name", "corpus_title", "model"])
    table = table.assign(
        measure=table["measure"].map(lambda m: MEASURE_LABELS.get(m, (m,))[0]),
        definition=table["definition"].map({"wt": "WT", "lw": "LW"}).fillna(table["definition"]),
    )
    labels.frame(
        table,
        title="Linear vs GAM link per corpus and model",
        key="lang_link_table",
        column_config={
            "language_name": "language",
            "corpus_title": "corpus",
            "measure": "reading measure",
            "model": "model",
            "definition": "word surprisal",
            "n_words": ("words", "%d"),
            "linear_delta_loglik_nats_per_word": ("ΔLL linear (nats per word)", "%.4f"),
            "gam_delta_loglik_nats_per_word": ("ΔLL GAM (nats per word)", "%.4f"),
            "gam_minus_linear_delta_loglik_nats_per_word": ("GAM − linear (nats per word)", "%.4f"),
            "gam_minus_linear_delta_loglik_ci_low_nats_per_word": ("95% interval low", "%.4f"),
            "gam_minus_linear_delta_loglik_ci_high_nats_per_word": ("95% interval high", "%.4f"),
            "gam_minus_linear_p_value": ("paired permutation p", "%.3f"),
            "gam_surprisal_edf": ("degrees of freedom of the smooth (1 = straight)", "%.2f"),
        },
    )

# ------------------------------------------------------------------ a text in its script
st.subheader("A text in its language")
corpora = surp.drop_duplicates("corpus").sort_values("language_name")
corpus = url_state.selectbox(
    "Language",
    list(corpora["corpus"]),
    format_func=dict(zip(corpora["corpus"], corpora["language_name"])).get,
    key="lang_text_corpus",
    param="text_language",
    default=next((c for c, lang in zip(corpora["corpus"], corpora["language"]) if _script(lang) != "Latn"), None),
)  # a script other than Latin first
run = sel.loc[sel["corpus"] == corpus, "run_id"].sort_values().iloc[0]
words = data.rows(
    WORDS,
    ["doc_id", "word_index", "word", f"mean_rt_{measure}_ms"],
    where={"corpus": corpus, "run_id": run},
    order_by=["doc_id", "word_index"],
)
if words is not None and not words.empty:
    docs = sorted(words["doc_id"].unique(), key=lambda d: (len(str(d)), str(d)))
    doc = url_state.selectbox("Text", docs, key="lang_text_doc", param="text")
    w = words[words["doc_id"] == doc].sort_values("word_index")
    code = corpora.set_index("corpus").loc[corpus, "language"]
    direction = "rtl" if _script(code) in RIGHT_TO_LEFT else "ltr"
    # aligned where its script starts (Streamlit's markdown aligns left); a Korean word never split across lines
    st.markdown(
        f'<div lang="{html.escape(str(code))}" dir="{direction}" style="font-size:1.1rem;line-height:1.7;'
        'word-break:keep-all;text-align:start">' + html.escape(" ".join(w["word"])) + "</div>",
        unsafe_allow_html=True,
    )
    read = w[f"mean_rt_{measure}_ms"].notna()
    st.caption(
        f"Text {doc} of {len(docs)} of {labels.corpus_name(corpus)}: {len(w)} words as printed, "
        f"{int(read.sum())} of them with a mean {MEASURES[measure]} "
        f"({w.loc[read, f'mean_rt_{measure}_ms'].mean():.0f} ms "
        "on average over MECO's readers); a word nobody fixated has no time, never 0 ms."
    )

labels.related(
    [
        ("app_pages/reading_times.py", "Reading times: ΔLL of every model on the English corpora"),
        ("app_pages/word_surprisal.py", "Word surprisal: leading-whitespace (LW) vs whitespace-trailing (WT)"),
        ("app_pages/scoreboard.py", "Scoreboard: every corpus and measure side by side"),
    ]
)
