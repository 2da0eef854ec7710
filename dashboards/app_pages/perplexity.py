"""Models x corpora: token perplexity (95% interval), bits per byte/char, word and normalized perplexity."""

from __future__ import annotations

import altair as alt
import streamlit as st

import charts
import data
import labels
import url_state
from predictabase.ingest import corpus_table

st.title("Perplexity by model and corpus")
_df = data.table("mart_model_perplexity")
if _df is not None and not _df.empty and _df["bits_per_byte"].notna().any():
    # the corpus scored by the most models (the featured corpus on a tie: Natural Stories), its models from the
    # most bits per byte
    _n = _df.dropna(subset=["bits_per_byte"]).groupby("corpus")["model_key"].nunique()
    _corpus = sorted(_n.index, key=lambda c: (-_n[c], c != corpus_table.FEATURED, c))[0]
    _rows = _df[(_df["corpus"] == _corpus) & _df["bits_per_byte"].notna()].sort_values("bits_per_byte", ascending=False)
    _first, *_rest = _rows.itertuples()
    _others = "".join(f", {labels.model_name(r.model_key)} {r.bits_per_byte:.2f}" for r in _rest)
    st.markdown(
        f"{labels.model_name(_first.model_key)} needs {_first.bits_per_byte:.2f} bits per byte on "
        f"{labels.corpus_name(_corpus)}{_others}: lower is better."
    )
st.caption(
    "Each point is one model on one corpus (the scoring run the marts are built from); "
    "bars are 95% intervals where the mart provides them. Lower is better."
)

df = data.page_table(
    "mart_model_perplexity",
    "The snapshot has no scored runs yet: score a corpus with `predictabase score`, then `predictabase build`.",
)

metric_options = [m for m in labels.METRICS if m in df.columns]
left, right = st.columns([3, 1], vertical_alignment="bottom")
with left:
    # bits per byte by default: comparable across tokenizers (a token perplexity is per the model's own tokens)
    metric = url_state.selectbox(
        "Metric",
        metric_options,
        format_func=labels.metric_title,
        key="metric",
        param="metric",
        default="bits_per_byte",
        help="Bits per byte and per character compare models with different tokenizers; "
        "token perplexity counts each model's own tokens, so it does not.",
    )
with right:
    log_scale = url_state.toggle("Log scale", key="log", param="log")
left, right = st.columns(2)
with left:
    # the shipped corpora first, then a user's (`predictabase corpus add`), each by its name
    chosen_corpora = url_state.multiselect(
        "Corpora", labels.sorted_corpora(df["corpus"]), key="corpora", param="corpus", format_func=labels.corpus_name
    )
with right:
    chosen_models = url_state.multiselect(
        "Models",
        sorted(df["model_key"].dropna().unique(), key=labels.model_rank),
        key="models",
        param="model",
        format_func=labels.model_name,
    )

view = df[df["corpus"].isin(chosen_corpora) & df["model_key"].isin(chosen_models)]
if view.empty:
    st.info("Nothing selected.")
    st.stop()

lo, hi = f"{metric}_ci_low", f"{metric}_ci_high"
has_ci = lo in view.columns and hi in view.columns and view[[lo, hi]].notna().any().any()
title = labels.metric_title(metric)

plot_cols = ["model_key", "corpus", "source", "n_tokens", metric] + ([lo, hi] if has_ci else [])
plot = view[[c for c in plot_cols if c in view.columns]].dropna(subset=[metric])
plot = plot.assign(
    corpus_name=plot["corpus"].map(labels.corpus_name), model_name=plot["model_key"].map(labels.model_name)
)
model_names = [labels.model_name(m) for m in chosen_models]
corpus_names = [labels.corpus_name(c) for c in chosen_corpora]

tooltip = [
    alt.Tooltip("model_name:N", title="model"),
    alt.Tooltip("corpus_name:N", title="corpus"),
    alt.Tooltip(f"{metric}:Q", title=labels.header(metric), format=".4g"),
]
if has_ci:
    tooltip += [
        alt.Tooltip(f"{lo}:Q", title="95% CI low", format=".4g"),
        alt.Tooltip(f"{hi}:Q", title="95% CI high", format=".4g"),
    ]
if "n_tokens" in plot.columns:
    tooltip.append(alt.Tooltip("n_tokens:Q", title="tokens", format=","))

scale = alt.Scale(type="log") if log_scale else alt.Scale(zero=False)
base = alt.Chart().encode(  # the data on the layer below, once: Altair compares its layers' frames by their text
    y=alt.Y("corpus_name:N", title="corpus", sort=corpus_names, axis=alt.Axis(labelLimit=320)),
    yOffset=alt.YOffset("model_name:N", sort=model_names),
    color=alt.Color(
        "model_name:N",
        title="model",
        sort=model_names,
        scale=alt.Scale(scheme="tableau10"),
        legend=alt.Legend(labelLimit=400),
    ),
    tooltip=tooltip,
)
points = base.mark_point(filled=True, size=90).encode(x=alt.X(f"{metric}:Q", title=title, scale=scale))
layers = [points]
if has_ci:
    layers.insert(
        0, base.mark_rule(strokeWidth=2).encode(x=alt.X(f"{lo}:Q", title=title, scale=scale), x2=alt.X2(f"{hi}:Q"))
    )
    layers.insert(0, base.mark_tick(thickness=2, size=10).encode(x=alt.X(f"{lo}:Q", title=title, scale=scale)))
    layers.insert(0, base.mark_tick(thickness=2, size=10).encode(x=alt.X(f"{hi}:Q", title=title, scale=scale)))
chart = alt.layer(*layers, data=plot).properties(height=60 + 28 * len(chosen_models) * len(chosen_corpora))
charts.show(
    chart,
    f"{title} by corpus and model",
    f"A dot plot of {title.lower()} for each selected model on each "
    f"selected corpus{', with 95% intervals' if has_ci else ''}; lower is better.",
    subtitle="lower is better" + ("; bars: 95% intervals" if has_ci else ""),
)
if not has_ci:
    st.caption(f"The mart has no 95% interval for {title.lower()}; points only.")

st.subheader("All perplexity metrics")
# models and corpora by their names (the keys stay in SQL: the run_id column joins this table to the marts)
labels.show(
    view.assign(
        model_name=view["model_key"].map(labels.model_name), corpus_title=view["corpus"].map(labels.corpus_name)
    ).drop(columns=["model_key", "corpus"]),
    [
        "model_name",
        "corpus_title",
        "bits_per_byte",
        "bits_per_byte_ci_low",
        "bits_per_byte_ci_high",
        "token_perplexity",
        "token_perplexity_ci_low",
        "token_perplexity_ci_high",
        "bits_per_char",
        "word_perplexity",
        "bits_per_word",
        "normalized_perplexity",
        "mean_surprisal_nats",
        "mean_surprisal_nats_ci_low",
        "mean_surprisal_nats_ci_high",
        "mean_surprisal_bits",
        "n_docs",
        "n_tokens",
        "n_words",
        "n_chars",
        "n_bytes",
    ],
    mart="mart_model_perplexity",
    key="perplexity_table",
)

labels.related(
    [
        ("app_pages/scoreboard.py", "Scoreboard: humans against the best model on every measure"),
        ("app_pages/human_perplexity.py", "Human perplexity: people's perplexity from a guessing game"),
        ("app_pages/reading_times.py", "Reading times: does lower perplexity predict reading better?"),
    ]
)
