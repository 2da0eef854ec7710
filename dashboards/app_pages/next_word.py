"""Humans vs models: next word. People's cloze responses against a model's whole-word probabilities.

Reads only the published snapshot's `mart_cloze_vs_model_summary` (the finding and the table by model),
`mart_cloze_vs_model` (one sentence's positions), `mart_cloze_vs_model_responses` (one position's two
distributions) and `mart_cloze_calibration`; computes no metric: it filters, orders and formats the marts'
columns. Probabilities are Oh & Schuler's (2024) whitespace-trailing word probabilities (WT, eq. 6); the human
distribution is each response's share of the non-empty responses (the empty response is left out).
"""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

import charts
import data
import labels
import url_state
from predictabase.ingest import corpus_table

#: the corpus whose cloze norms keep every response (UCL): the page's sentences and response distributions
CORPUS = corpus_table.CLOZE_RESPONSES[0]
CONTEXTS = "mart_cloze_vs_model"
RESPONSES = "mart_cloze_vs_model_responses"
SUMMARY = "mart_cloze_vs_model_summary"
CALIBRATION = "mart_cloze_calibration"
N_SHOWN = 15  # responses shown per context: the most frequent ones ...
N_MODEL_EXTRA = 5  # ... and the model's favourites among the responses
PEOPLE = "people: share of the responses"
MODEL = "model: WT probability, renormalised over the responses"
DIAGONAL = "perfect calibration (model = people)"
SUMMARY_COLUMNS = [
    "corpus",
    "model_key",
    "n_contexts",
    "model_probability_modal_wt_mean",
    "model_probability_modal_wt_ci_low",
    "model_probability_modal_wt_ci_high",
    "human_probability_modal_mean",
    "model_top_is_human_modal_mean",
    "model_probability_true_word_wt_mean",
    "human_probability_true_word_mean",
    "human_entropy_bits_mean",
    "model_entropy_renormalised_bits_mean",
    "spearman_rho_mean",
    "spearman_rho_ci_low",
    "spearman_rho_ci_high",
    "kl_human_model_bits_mean",
    "js_divergence_bits_mean",
    "model_mass_on_responses_wt_mean",
]


def pct(x, digits: int = 1) -> str:
    return "—" if x is None or pd.isna(x) else f"{100 * x:.{digits}f}%"


def num(x, fmt: str = ".2f") -> str:
    return "—" if x is None or pd.isna(x) else format(x, fmt)


def doc_key(d) -> tuple:
    return (len(str(d)), str(d))


st.title("Humans vs models: next word")

summary = data.page_table(
    SUMMARY,
    f"No human-vs-model comparison yet ({SUMMARY} is empty): run `predictabase "
    "cloze` after ingesting the cloze norms, then `predictabase build`.",
)

models = sorted(summary["model_key"].unique(), key=labels.model_rank)
of_corpus = summary[summary["corpus"] == CORPUS].set_index("model_key")

# ------------------------------------------------------------------ the finding, from the summary mart
lead = models[0] if models[0] in of_corpus.index else None
if lead is not None:
    s = of_corpus.loc[lead]
    st.markdown(
        f"**On the {labels.corpus_name(CORPUS)} sentences, {labels.model_name(lead)} gives the word most people "
        f"guessed a probability of {pct(s['model_probability_modal_wt_mean'])} on average "
        f"(people: {pct(s['human_probability_modal_mean'])}), "
        f"and its favourite among the people's answers is their most frequent one in "
        f"{pct(s['model_top_is_human_modal_mean'], 0)} of the {int(s['n_contexts']):,} contexts.**"
    )
    st.markdown(
        f"Over the answers people gave, the model's ranking agrees with theirs only in part (Spearman's ρ "
        f"{num(s['spearman_rho_mean'])}, 95% CI {num(s['spearman_rho_ci_low'])} to {num(s['spearman_rho_ci_high'])}), "
        f"and it puts {pct(s['model_mass_on_responses_wt_mean'], 0)} of its next-word probability on those answers."
    )
st.caption(
    "Probabilities are whole-word probabilities with the trailing whitespace (WT: Oh & Schuler, *Leading Whitespaces of Language Models' Subword "
    "Vocabulary Pose a Confound for Calculating Word Probabilities*, EMNLP 2024, eq. 6: the "
    "word's tokens times the probability that a word boundary follows, over the same before it). People's "
    "probabilities are each answer's share of the non-empty answers (UCL: de Varda et al.'s full response "
    "distributions; empty answers are left out of both sides). 95% intervals: bootstrap over contexts."
)

# ------------------------------------------------------------------ a sentence, word by word
st.subheader("A sentence, word by word")
c1, c2 = st.columns([1, 1])
model = url_state.selectbox("Model", models, key="nw_model", param="model", format_func=labels.model_name, where=c1)
contexts = data.rows(CONTEXTS, where={"corpus": CORPUS, "model_key": model})
if contexts is None or contexts.empty:
    st.info(f"{CONTEXTS} has no {labels.corpus_name(CORPUS)} contexts for {labels.model_name(model)}.")
else:
    docs = sorted(contexts["doc_id"].unique(), key=doc_key)
    last = contexts.sort_values("word_index").groupby("doc_id").last()
    sentence_of = {d: f"{last.loc[d, 'context']} {last.loc[d, 'true_word']}" for d in docs}
    doc = url_state.selectbox(
        "Sentence",
        docs,
        key="nw_sentence",
        param="sentence",
        where=c2,
        format_func=lambda d: f"{d}: {sentence_of[d][:70]}",
    )
    sent = contexts[contexts["doc_id"] == doc].sort_values("word_index")
    positions = list(sent["word_index"])
    word_of = dict(zip(sent["word_index"], sent["true_word"]))
    pos = url_state.select_slider(
        "Word", positions, key="nw_position", param="word", format_func=lambda i: f"{word_of[i]} (word {i + 1})"
    )
    row = sent[sent["word_index"] == pos].iloc[0]
    st.markdown(f"> {row['context']} **___** &nbsp;&nbsp; (the text goes on with *{row['true_word']}*)")
    # three figures a row at most: four side by side cut their values in a 480 px column (a 940 px window)
    m1, m2, m3 = st.columns(3)
    m1.metric(
        "people's most frequent answer",
        f"{row['modal_response']}",
        pct(row["human_probability_modal"]),
        delta_color="off",
    )
    m2.metric(
        "model's favourite among them",
        f"{row['model_top_response']}",
        pct(row["model_probability_modal_wt"]) + " on the people's favourite",
        delta_color="off",
    )
    m3.metric(
        "entropy (bits), people vs model",
        f"{num(row['human_entropy_bits'])} vs {num(row['model_entropy_renormalised_bits'])}",
    )
    m4, m5, _ = st.columns(3)
    m4.metric(
        "Spearman's ρ, people vs model",
        num(row["spearman_rho"]),
        help="the rank correlation of the people's and the model's probabilities of the people's answers",
    )
    m5.metric(
        "KL(people ‖ model) (bits)",
        num(row["kl_human_model_bits"]),
        help="how many bits the model's distribution over the people's answers loses against theirs",
    )
    resp = data.rows(RESPONSES, where={"corpus": CORPUS, "model_key": model, "doc_id": doc, "word_index": int(pos)})
    if resp is None or resp.empty:
        st.info(f"{RESPONSES} has no responses here.")
    else:
        shown = resp[(resp["human_rank"] <= N_SHOWN) | (resp["model_rank"] <= N_MODEL_EXTRA)]
        order = list(shown.sort_values(["human_rank"])["response"])
        long = pd.concat(
            [
                pd.DataFrame(
                    {
                        "response": shown["response"],
                        "who": PEOPLE,
                        "probability": shown["human_probability"],
                        "count": shown["response_count"],
                        "p_wt": shown["model_probability_wt"],
                    }
                ),
                pd.DataFrame(
                    {
                        "response": shown["response"],
                        "who": MODEL,
                        "probability": shown["model_probability_wt_renormalised"],
                        "count": shown["response_count"],
                        "p_wt": shown["model_probability_wt"],
                    }
                ),
            ]
        )
        chart = (
            alt.Chart(long)
            .mark_bar()
            .encode(
                y=alt.Y("response:N", sort=order, title="answer (people's most frequent first)"),
                x=alt.X(
                    "probability:Q",
                    title="probability (share of the answers; model renormalised over them)",
                    axis=alt.Axis(format="%"),
                ),
                yOffset=alt.YOffset("who:N", sort=[PEOPLE, MODEL]),
                color=alt.Color(
                    "who:N",
                    scale=alt.Scale(domain=[PEOPLE, MODEL], range=["#4c78a8", "#f58518"]),
                    legend=alt.Legend(title=None, orient="bottom", direction="vertical", labelLimit=500),
                ),
                tooltip=[
                    alt.Tooltip("response:N", title="answer"),
                    alt.Tooltip("who:N", title="bar"),
                    alt.Tooltip("probability:Q", title="probability", format=".1%"),
                    alt.Tooltip("count:Q", title="people who gave it"),
                    alt.Tooltip("p_wt:Q", title="model WT probability (not renormalised)", format=".2%"),
                ],
            )
            .properties(height=max(220, 34 * len(order)))
        )
        charts.show(
            chart,
            f"People's answers and {labels.model_name(model)}'s probabilities for the next word",
            f'Bars: for each answer people gave after "{row["context"][-40:]}", the share of people who '
            "gave it and the model's whole-word probability of it (renormalised over the answers), in "
            "percent.",
            subtitle="probability in % of the answers; people's most frequent answer first",
        )
        st.caption(
            f"{len(shown)} of the {len(resp)} different answers {int(resp['n_responses_words'].iloc[0])} "
            f"people gave here (the {N_SHOWN} most frequent and the model's {N_MODEL_EXTRA} favourites). The "
            f"model's WT probabilities of all {len(resp)} answers add up to "
            f"{pct(row['model_mass_on_responses_wt'])}; the orange bars divide by that sum."
        )

# ------------------------------------------------------------------ calibration
st.subheader("Calibration: people's cloze probability vs the model's")
cal = data.table(CALIBRATION)
if cal is None or cal.empty:
    st.info(f"{CALIBRATION} is empty.")
else:
    cal = cal[cal["model_key"] == model].copy()
    cal["corpus_name"] = cal["corpus"].map(labels.corpus_name)
    cal["bin"] = cal.apply(
        lambda r: "0 (no one)" if r["bin_index"] == 0 else f"{r['bin_lower']:.1f}–{r['bin_upper']:.1f}", axis=1
    )
    scale = alt.Scale(domain=[0, 1])
    x = alt.X(
        "human_probability_mean:Q",
        title="people's cloze probability (mean in the bin)",
        scale=scale,
        axis=alt.Axis(format="%"),
    )
    y = alt.Y(
        "model_probability_wt_mean:Q",
        title=f"{labels.model_name(model)}'s WT probability (mean in the bin)",
        scale=scale,
        axis=alt.Axis(format="%"),
    )
    points = (
        alt.Chart(cal)
        .mark_line(point=alt.OverlayMarkDef(filled=True, size=70))
        .encode(
            x=x,
            y=y,
            color=alt.Color("corpus_name:N", legend=alt.Legend(title="corpus (words)", orient="bottom")),
            tooltip=[
                alt.Tooltip("corpus_name:N", title="corpus"),
                alt.Tooltip("bin:N", title="people's probability bin"),
                alt.Tooltip("n_words:Q", title="words", format=","),
                alt.Tooltip("human_probability_mean:Q", title="people (mean)", format=".1%"),
                alt.Tooltip("model_probability_wt_mean:Q", title="model WT (mean)", format=".1%"),
                alt.Tooltip("model_probability_wt_median:Q", title="model WT (median)", format=".1%"),
            ],
        )
    )
    diagonal = (
        alt.Chart(
            pd.DataFrame(
                {"human_probability_mean": [0, 1], "model_probability_wt_mean": [0, 1], "line": [DIAGONAL, DIAGONAL]}
            )
        )
        .mark_line(color="#888888")
        .encode(
            x=x,
            y=y,
            strokeDash=alt.StrokeDash(
                "line:N",
                scale=alt.Scale(domain=[DIAGONAL], range=[[5, 4]]),
                legend=alt.Legend(title=None, orient="bottom", labelLimit=500),
            ),
        )
    )
    charts.show(
        alt.layer(diagonal, points).properties(height=420),
        f"Calibration of {labels.model_name(model)} against people's cloze probability",
        "Words binned by people's cloze probability: each point is a bin's mean cloze probability against "
        "the model's mean whole-word (WT) probability, in percent, one line per corpus; the dashed diagonal "
        "is perfect agreement.",
        subtitle="mean probability per bin, %",
    )
    st.caption(
        "Words binned by people's cloze probability (0, then steps of 0.1). UCL: every answer people gave, "
        "plus the true word where no one gave it; Provo: the true word of every position (published cp). "
        "Below the diagonal the model is less sure of the word than people are."
    )

# ------------------------------------------------------------------ every model
st.subheader("Every model")
table = summary[[c for c in SUMMARY_COLUMNS if c in summary.columns]].copy()
table = table.sort_values(
    ["corpus", "model_key"],
    key=lambda s: s.map(  # shipped corpora first, then a user's
        labels.model_rank if s.name == "model_key" else labels.corpus_rank
    ),
)
table["model_key"] = table["model_key"].map(labels.model_name)
table["corpus"] = table["corpus"].map(labels.corpus_name)
labels.show(table, key="nw_summary")
st.caption(
    "Empty cells: the measure needs the full response distribution, which only UCL publishes (Provo "
    "publishes the modal answer and the true word's share)."
)

labels.related(
    [
        ("app_pages/top1.py", "Top-1 game: how often people and models guess the next token"),
        ("app_pages/word_surprisal.py", "Word surprisal: leading-whitespace (LW) vs whitespace-trailing (WT)"),
        ("app_pages/reading_times.py", "Reading times: model surprisal and how long people read"),
        ("app_pages/scoreboard.py", "Scoreboard: humans against the best model on every measure"),
    ]
)
