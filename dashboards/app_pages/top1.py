"""Top-1 game (Shlegeris et al. 2024, sec. 3, Figures 1 and 2): how often players and language models
name the true next token.

Reads only the published snapshot's top-1 marts (`mart_top1_summary`, `mart_top1_player_accuracy`,
`mart_top1_questions`; `mart_models` for display names); computes no metric: it filters, labels, counts rows
for the histogram and formats the marts' columns.
"""

from __future__ import annotations

import math

import altair as alt
import pandas as pd
import streamlit as st

import charts
import data
import labels
import url_state

# display texts only; every number comes from the marts
SUBSETS = {"word_tokens": "questions whose answer is a whole word", "all_possible": "all possible questions"}
SUBSETS_SHORT = {"word_tokens": "whole-word answers", "all_possible": "all possible"}
SUBSET_CHOICES = {
    "word_tokens": "whole-word answers only (Figure 2; default: every model is measured here)",
    "all_possible": "all possible questions (Figure 1; exact-token models and the authors' numbers only)",
}
COMPARISON = {
    "human_guess": "human guesses",
    "exact_token": "exact GPT-2 token",
    "word_top1": "most probable whole word",
    "authors_reported": "reported by the authors (not measured here)",
}
# what the model's prediction is, in the finding sentence
PREDICTION = {"word_top1": "most probable next word", "exact_token": "most probable next token"}
KIND_ORDER = {"humans": 0, "model": 1, "reference": 2}
MEASURED, REPORTED = "measured here", "reported by the authors (not measured here)"
# the authors' files the paper's figures draw (seed top1_reference_files: the notes say which figure)
PAPER_FIGURE_FILES = {
    "all_possible": "model_perfs_new_new_new_orig.json",
    "word_tokens": "model_perfs_new_new_new.json",
}
PLAYERS, EXCLUDED = "players", "excluded accounts (app testers, the shared 'anon' account)"


visible = labels.visible  # a token with its whitespace made visible


def pct(x) -> str:
    return "—" if x is None or pd.isna(x) else f"{100 * x:.1f}%"


st.title("Top-1 game")

summary = data.page_table(
    "mart_top1_summary",
    "The snapshot has no top-1 game yet: `predictabase ingest lm_game_top1 "
    "lm_game_model_perfs lm_game_vocabulary`, `predictabase top1`, then "
    "`predictabase build`.",
)
players = data.table("mart_top1_player_accuracy")
questions = data.shared("mart_top1_questions")  # 25,000 rows of lists, only filtered: not copied per run
runs = data.table("mart_models")
model_ids = {} if runs is None else dict(zip(runs["model_key"], runs["model_id"]))


def model_name(key: str) -> str:
    if labels.model_name(key) != key:  # in the model table
        return labels.model_name(key)
    mid = model_ids.get(key)
    return str(mid).rsplit("/", 1)[-1] if isinstance(mid, str) and "/" in mid else key


# the authors' names of their models (model_perfs*.json), for people (as seed scoreboard_reference_models)
AUTHORS_MODELS = {
    "davinci": "GPT-3 davinci",
    "curie": "GPT-3 curie",
    "babbage": "GPT-3 babbage",
    "ada": "GPT-3 ada",
    "GPT-Neo-20b": "GPT-NeoX-20B",
    "gpt-j-6b": "GPT-J-6B",
    "gpt-neo-125m": "GPT-Neo 125M",
    "gpt-neo-1-3b": "GPT-Neo 1.3B",
    "gpt-neo-2-7b": "GPT-Neo 2.7B",
    "fairseq-125m": "fairseq dense 125M",
    "fairseq-1-3b": "fairseq dense 1.3B",
    "fairseq-2-7b": "fairseq dense 2.7B",
    "fairseq-6-7b": "fairseq dense 6.7B",
    "fairseq-13b": "fairseq dense 13B",
}


def predictor_label(r) -> str:
    if r["predictor_kind"] == "model":
        return model_name(r["predictor"])
    if r["predictor_kind"] == "reference":  # several files report the same model name
        return f"{AUTHORS_MODELS.get(r['predictor'], r['predictor'])} ({r['reference_file']})"
    return "players (pooled)" if r["predictor"] == "humans (pooled)" else r["predictor"]


summary = summary.copy()
summary["label"] = summary.apply(predictor_label, axis=1)

# ------------------------------------------------------------------ the finding (word-token questions)
measured_words = summary[
    (summary["predictor_kind"] == "model") & (summary["subset"] == "word_tokens") & summary["n"].notna()
].sort_values("accuracy", ascending=False)
humans_words = summary[(summary["predictor_kind"] == "humans") & (summary["subset"] == "word_tokens")]
if len(measured_words) == 1:
    m = measured_words.iloc[0]
    finding = (
        f"On the {m['n']:,} answers players gave to questions whose answer is a whole word, "
        f"{m['label']}'s {PREDICTION.get(m['comparison'], 'prediction')} was right {pct(m['accuracy'])} "
        f"of the time, the players {pct(m['human_accuracy_same_questions'])} (same questions)."
    )
elif len(measured_words) > 1:
    kinds = measured_words["comparison"].unique()
    what = f"the models' {PREDICTION.get(kinds[0], 'prediction')}" if len(kinds) == 1 else "the models' predictions"
    claims = [
        f"{pct(m['accuracy'])}{' of the time' if i == 0 else ''} for {m['label']}"
        + ("" if len(kinds) == 1 else f" ({PREDICTION.get(m['comparison'], 'prediction')})")
        for i, (_, m) in enumerate(measured_words.iterrows())
    ]
    if len(measured_words[["n", "human_accuracy_same_questions"]].drop_duplicates()) == 1:  # the same answers
        m = measured_words.iloc[0]
        finding = (
            f"On the {m['n']:,} answers players gave to questions whose answer is a whole word, the players "
            f"were right {pct(m['human_accuracy_same_questions'])} of the time and, on the same questions, "
            f"{what} was right " + ", ".join(claims[:-1]) + f" and {claims[-1]}."
        )
    else:
        parts = [
            f"{m['label']} {pct(m['accuracy'])} (players {pct(m['human_accuracy_same_questions'])} on the "
            f"same {m['n']:,} answers)"
            for _, m in measured_words.iterrows()
        ]
        finding = (
            f"On questions whose answer is a whole word, how often {what} was right, next to the players "
            "on exactly the same questions: " + "; ".join(parts) + "."
        )
elif len(humans_words):
    h = humans_words.iloc[0]
    finding = (
        f"On the {h['n']:,} answers players gave to questions whose answer is a whole word, the players were "
        f"right {pct(h['accuracy'])} of the time; no model has been measured on the game yet "
        "(`predictabase top1`, then `predictabase build`)."
    )
else:
    finding = "The snapshot holds no players' answers on whole-word questions."
st.markdown(finding)
st.caption(
    "From Shlegeris, Roger, Chan & McLean, *Language Models Are Better Than Humans at Next-token "
    "Prediction* (TMLR 2024), section 3: players read web text and typed, at each step, the single GPT-2 token they "
    "thought most likely to come next. A model answers the same questions with its most probable "
    "prediction. Whole-word questions (a space, then letters, followed by a new word) are the only ones where "
    "a model with its own tokenizer can be compared fairly: it names the most probable whole word, while "
    "the players named a GPT-2 token. So the default view compares players and models on those."
)

# ------------------------------------------------------------------ Figures 1 and 2
st.subheader("How accurate are the players? (Figures 1 and 2)")
c1, c2 = st.columns([3, 2])
subset = url_state.radio(
    "Questions", SUBSET_CHOICES, format_func=SUBSET_CHOICES.get, key="top1_subset", param="questions", where=c1
)
min_answers = c2.number_input(
    "Minimum answers per player",
    min_value=1,
    value=50,
    step=10,
    key="top1_min_answers",
    help="Counted over all possible questions, as the paper does (its 38 players with at least 50 answers).",
)
with_excluded = url_state.toggle(
    "Include the excluded accounts",
    key="top1_excluded",
    param="excluded",
    where=c2,
    help="Accounts left out of the analysis: testers of the authors' app (named in "
    "their analysis code) and a shared 'anon' account (inferred), drawn in another "
    "colour.",
)

refs_all = summary[(summary["predictor_kind"] == "reference") & (summary["subset"] == subset)]
files = sorted(refs_all["reference_file"].dropna().unique())
paper_file = PAPER_FIGURE_FILES[subset]
# the authors' files by an ordinal in words, for the chart's legend (their names, model_perfs_new_new_new.json
# and so on, say nothing to a reader)
SET_NAME = {f: f"the authors' results set {i + 1}" for i, f in enumerate(files)}
chosen_files = url_state.multiselect(
    "The authors' reported accuracies, from their files",
    files,
    format_func=lambda f: SET_NAME[f] + (" (the paper's figure)" if f == paper_file else ""),
    default=[paper_file] if paper_file in files else files,
    key=f"top1_files_{subset}",
    param="files",
    help="Default: the file the paper's figure shows. The authors measured their models on their own sample of "
    "1,000 questions; these numbers are reported, not measured here, and which subset each file covers is "
    "inferred from its name and values.",
)

if players is None:
    data.missing("mart_top1_player_accuracy")
else:
    pl = players[
        (players["subset"] == subset)
        & (players["answers_all_possible"] >= min_answers)
        & (with_excluded | ~players["is_excluded_player"].astype(bool))
    ].copy()
    pl["group"] = pl["is_excluded_player"].map({True: EXCLUDED, False: PLAYERS})
    measured = summary[(summary["predictor_kind"] == "model") & (summary["subset"] == subset)].sort_values("accuracy")
    refs = refs_all[refs_all["reference_file"].isin(chosen_files)].sort_values(["accuracy", "reference_file"])
    rules = pd.concat(
        [
            measured.assign(
                source=MEASURED,
                series=measured["label"] + " (" + measured["comparison"].map(COMPARISON) + ", measured here)",
            ),
            refs.assign(
                source=REPORTED,
                series=refs["predictor"].map(lambda p: AUTHORS_MODELS.get(p, p))
                + ", reported by the authors"
                + ((" (" + refs["reference_file"].map(SET_NAME) + ")") if len(chosen_files) > 1 else ""),
            ),
        ]
    )[["series", "source", "label", "accuracy", "comparison", "n"]]
    groups = [g for g in (PLAYERS, EXCLUDED) if g in set(pl["group"])]
    measured_palette = ["#c0392b", "#6a1b9a", "#d35400", "#7f0000"]
    reported_palette = [
        "#1b7837",
        "#2166ac",
        "#e08214",
        "#35978f",
        "#8c510a",
        "#01665e",
        "#542788",
        "#4d4d4d",
        "#74add1",
        "#b8860b",
        "#5aae61",
        "#9970ab",
    ]
    # two legends: the players' bars (squares), then each model's line (solid: measured here; dashed: reported)
    bar_color = alt.Color(
        "group:N",
        scale=alt.Scale(domain=groups, range=["#9db4d3", "#d9a441"][: len(groups)]),
        legend=alt.Legend(
            title=None, orient="bottom", direction="vertical", labelLimit=560, symbolType="square", symbolSize=200
        ),
    )
    rule_legend = alt.Legend(
        title=None,
        orient="bottom",
        direction="vertical",
        labelLimit=560,
        symbolType="stroke",
        symbolStrokeWidth=3,
        symbolSize=500,
    )
    names = rules["series"].tolist()
    n_measured = int((rules["source"] == MEASURED).sum())
    colors = [measured_palette[i % len(measured_palette)] for i in range(n_measured)] + [
        reported_palette[i % len(reported_palette)] for i in range(len(names) - n_measured)
    ]
    color = alt.Color("series:N", scale=alt.Scale(domain=names, range=colors), legend=rule_legend)
    dash = alt.StrokeDash(
        "series:N",
        scale=alt.Scale(domain=names, range=[[1, 0] if s == MEASURED else [6, 4] for s in rules["source"]]),
        legend=rule_legend,
    )
    # the axis spans the data (players and models), in whole tens of percent
    top = max([0.1] + pl["accuracy"].tolist() + rules["accuracy"].tolist())
    xscale = alt.Scale(domain=[0, min(1.0, math.ceil(top * 10 + 1e-9) / 10)], nice=False)
    binning = alt.Bin(step=0.02, extent=[0, 1])
    bars = (
        alt.Chart(pl[["player_id", "accuracy", "answers", "group"]])
        .mark_bar(opacity=0.9)
        .encode(
            x=alt.X(
                "accuracy:Q",
                bin=binning,
                scale=xscale,
                title="top-1 accuracy (share of the player's answers that were the true token)",
                axis=alt.Axis(format=".0%"),
            ),
            y=alt.Y("count():Q", title="players", stack="zero", axis=alt.Axis(tickMinStep=1, format="d")),
            color=bar_color,
            tooltip=[
                alt.Tooltip("group:N", title=" "),
                alt.Tooltip("count():Q", title="players"),
                alt.Tooltip("accuracy:Q", bin=binning, format=".0%", title="accuracy from"),
            ],
        )
    )
    lines = (
        alt.Chart(rules)
        .mark_rule(strokeWidth=2.5)
        .encode(
            x=alt.X("accuracy:Q", scale=xscale),
            color=color,
            strokeDash=dash,
            tooltip=[
                alt.Tooltip("label:N", title="model"),
                alt.Tooltip("source:N", title="accuracy"),
                alt.Tooltip("accuracy:Q", format=".1%", title="top-1 accuracy"),
            ],
        )
    )
    figure = "Figure 1" if subset == "all_possible" else "Figure 2"
    title = (
        f"{figure}: players' top-1 accuracy on {SUBSETS[subset]} "
        f"({len(pl)} players with at least {min_answers} answers)"
    )
    if pl.empty and rules.empty:
        st.info("No players and no models for this selection.")
    else:
        # the height holds the legend below the plot: one row per bar group and per line
        chart = alt.layer(bars, lines).properties(height=380 + 24 * (len(groups) + len(names)))
        charts.show(
            chart.resolve_scale(color="independent", strokeDash="independent"),
            title,
            f"A histogram of the players' top-1 accuracy (share of their answers that named the true next "
            f"token, in percent) on {SUBSETS[subset]}, with a vertical line at each model's accuracy.",
            subtitle="bars: number of players; solid lines: measured here; dashed: reported by the authors",
        )
    notes = [
        "Bars: players (one per player, no model). Solid lines: models measured here; dashed: the accuracy "
        "the authors reported for their models on their own 1,000-question sample."
    ]
    if measured.empty:
        notes.append(
            "No model is measured here on all possible questions: that needs a model with the game's "
            "GPT-2 tokenizer (compared token for token); other models are compared on whole-word "
            "questions only."
            if subset == "all_possible"
            else "No model is measured on these questions yet."
        )
    st.caption(" ".join(notes))

# ------------------------------------------------------------------ the summary table
st.subheader("Players and models, on the same questions")
both = url_state.toggle(
    "Show both sets of questions",
    key="top1_both",
    param="both",
    help="The default shows only the questions chosen above, so the rows compare like with like.",
)
tab = summary if both else summary[summary["subset"] == subset]
tab = tab.assign(_k=tab["predictor_kind"].map(KIND_ORDER)).sort_values(
    ["subset", "_k", "accuracy"], ascending=[False, True, False]
)
interval = [
    f"{100 * lo:.1f} – {100 * hi:.1f}" if pd.notna(lo) and pd.notna(hi) else "—"
    for lo, hi in zip(tab["accuracy_ci_low"], tab["accuracy_ci_high"])
]
table = pd.DataFrame(
    {
        "players or model": tab["label"],
        "how compared": tab["comparison"].map(COMPARISON).fillna(tab["comparison"]),
        "accuracy (%)": 100 * tab["accuracy"],
        "95% interval (%)": interval,
        "players on the same answers (%)": 100 * tab["human_accuracy_same_questions"],
        "answers": tab["n"],
        "questions": tab["subset"].map(SUBSETS_SHORT).fillna(tab["subset"]),
        "prediction proven most probable (% of questions)": 100 * tab["share_argmax_proven"],
        "players": tab["n_players"],
        "players with ≥ 50 answers": tab["n_players_min_50"],
        "their mean accuracy (%)": 100 * tab["mean_player_accuracy_min_50"],
        "answers without a model prediction": tab["n_without_prediction"],
        "about the authors' file": tab["reference_note"],
    }
)
pct_col = lambda label, help_: st.column_config.NumberColumn(label, format="%.1f", help=help_)  # noqa: E731
labels.frame(
    table,
    title="Top-1 accuracy of humans and models",
    key="top1_summary",
    column_config={
        "players or model": st.column_config.TextColumn("players or model", width=265),
        "how compared": st.column_config.TextColumn("how compared", width=250),
        "95% interval (%)": st.column_config.TextColumn("95% interval (%)", help="Wilson score interval"),
        "answers": st.column_config.NumberColumn(
            "answers",
            format="%d",
            help="players' answers counted (for a model: the players' answers to "
            "the questions it answered); none for the authors' numbers",
        ),
        "accuracy (%)": pct_col("accuracy (%)", "share of answers that were the true token"),
        "players on the same answers (%)": pct_col(
            "players on the same answers (%)", "the players, on exactly the answers of this row"
        ),
        "prediction proven most probable (% of questions)": pct_col(
            "prediction proven most probable (% of questions)",
            "the search proved the predicted word is the model's most probable word",
        ),
        "players": st.column_config.NumberColumn("players", format="%d"),
        "players with ≥ 50 answers": st.column_config.NumberColumn("players with ≥ 50 answers", format="%d"),
        "their mean accuracy (%)": pct_col("their mean accuracy (%)", "mean of those players' own accuracies"),
        "answers without a model prediction": st.column_config.NumberColumn(
            "answers without a model prediction", format="%d"
        ),
    },
)
st.caption(
    "95% intervals: Wilson score, each answer counted as independent (a player's answers are correlated, so "
    "the players' interval is too narrow). The authors' numbers come without a count or an interval. "
    "Accuracy on all possible questions exists only for models compared token for token and for the "
    "authors' numbers."
)

# ------------------------------------------------------------------ the question explorer
st.subheader("Question explorer")
if questions is None:
    data.missing("mart_top1_questions")
    st.stop()
if questions.empty:
    st.info("The snapshot has no questions of the top-1 game.")
    st.stop()


def doc_order(ids):
    """Documents in numeric order ('7' before '12'); their ids are text."""
    return ids.map(lambda d: (len(str(d)), str(d)))


beat = questions[
    (questions["human_accuracy"] > 0) & (questions["n_models"] > 0) & (questions["n_models_correct"] == 0)
].sort_values(
    ["human_accuracy", "n_answers", "doc_id", "position"],
    ascending=[False, False, True, True],
    key=lambda c: doc_order(c) if c.name == "doc_id" else c,
)


def _listed(value) -> list:
    """A list column's value as a list (NULL, e.g. a question no model answered: empty)."""
    return [] if value is None or (not hasattr(value, "__len__") and pd.isna(value)) else list(value)


def _preds(preds) -> list[dict]:
    return [dict(p) for p in _listed(preds)]


def _jump() -> None:
    choice = st.session_state.get("top1_jump")
    if choice:
        doc, pos = choice
        st.session_state["top1_only_answered"] = True
        st.session_state["top1_doc"] = doc
        st.session_state["top1_pos"] = int(pos)


with st.expander(f"Questions where players beat every model ({len(beat):,})", expanded=False):
    st.caption(
        "Questions where at least one player named the true token and no model did (among questions with "
        "at least one model prediction), most players right first."
    )
    if not beat.empty:
        shown = beat.head(500)
        st.dataframe(
            pd.DataFrame(
                {
                    "document": shown["doc_id"],
                    "position": shown["position"],
                    "context (last characters)": shown["context_tail"].map(lambda s: "…" + str(s)[-50:]),
                    "true token": shown["true_token"].map(visible),
                    "players right": shown["n_correct"],
                    "players' answers": shown["n_answers"],
                    "players' accuracy (%)": 100 * shown["human_accuracy"],
                    "models' predictions": shown["model_predictions"].map(
                        lambda ps: ", ".join(
                            f"{model_name(p['model_key'])}: {visible(p['predicted'])}" for p in _preds(ps)
                        )
                    ),
                }
            ),
            hide_index=True,
            key="top1_beat",
            column_config={
                "players' accuracy (%)": st.column_config.NumberColumn("players' accuracy (%)", format="%.0f")
            },
        )
        st.selectbox(
            "Open one of them in the explorer",
            [None] + list(zip(shown["doc_id"], shown["position"])),
            format_func=lambda c: "choose a question" if c is None else f"document {c[0]}, position {c[1]}",
            key="top1_jump",
            on_change=_jump,
        )

only_answered = url_state.toggle(
    "Only questions with players' answers in the analysis",
    key="top1_only_answered",
    param="answered",
    default=True,
    help="Off: also the questions only excluded accounts answered, and those whose "
    "answer could not be typed (a newline, a partial character).",
)
qs = questions[questions["n_answers"] > 0] if only_answered else questions
docs = sorted(qs["doc_id"].unique(), key=lambda d: (len(str(d)), str(d)))
per_doc = qs.groupby("doc_id").size()
d1, d2 = st.columns([1, 3])
doc = url_state.selectbox(
    "Document",
    docs,
    key="top1_doc",
    param="document",
    where=d1,
    format_func=lambda d: f"document {d} ({per_doc[d]} questions)",
)
positions = sorted(int(p) for p in qs.loc[qs["doc_id"] == doc, "position"])


def _step(delta: int) -> None:
    i = positions.index(st.session_state["top1_pos"]) + delta
    st.session_state["top1_pos"] = positions[max(0, min(len(positions) - 1, i))]


with d2:
    pos = url_state.select_slider(
        "Question: position of the true token in the document (tokens)", positions, key="top1_pos", param="question"
    )
b1, b2, _ = st.columns([1, 1, 6])
b1.button("◀ previous", key="top1_prev", on_click=_step, args=(-1,), disabled=pos == positions[0])
b2.button("next ▶", key="top1_next", on_click=_step, args=(1,), disabled=pos == positions[-1])

q = qs[(qs["doc_id"] == doc) & (qs["position"] == pos)].iloc[0]
st.markdown("**What the players saw** (the context's last characters; spaces in tokens are shown as ␣)")
context = "" if pd.isna(q["context_tail"]) else str(q["context_tail"])
st.code(("…" if len(context) >= 80 else "") + context, language=None, wrap_lines=True)
m1, m2, m3, m4 = st.columns(4)
m1.metric(
    "True next token", visible(q["true_token"]), help="the document's next token; ␣ is a space, part of the token"
)
m2.metric("Token after it", visible(q["next_token"]))
m3.metric(
    "Players right",
    f"{q['n_correct']} of {q['n_answers']}",
    help=f"accuracy {pct(q['human_accuracy'])}; most common wrong guess: {visible(q['most_common_wrong_guess'])}",
)
m4.metric("Models right", f"{q['n_models_correct']} of {q['n_models']}")
kind = (
    "could not be typed in the game (impossible question)"
    if q["is_impossible"]
    else "a whole word"
    if q["is_word_token"]
    else "not a whole word (models with another tokenizer skip it)"
)
st.caption(f"Document {doc}, position {pos}: the true token is {kind}.")

left, right = st.columns(2)
with left:
    st.markdown("**The players' guesses**")
    guesses = _listed(q["human_guesses"])
    if guesses:
        g = pd.Series(guesses).value_counts(sort=False).rename_axis("guess").reset_index(name="players")
        g = g.sort_values(["players", "guess"], ascending=[False, True])
        st.dataframe(
            pd.DataFrame(
                {
                    "guess": g["guess"].map(visible),
                    "players who typed it": g["players"],
                    "right": g["guess"] == q["true_token"],
                }
            ),
            hide_index=True,
            key="top1_guesses",
            column_config={"right": st.column_config.CheckboxColumn("right")},
        )
    else:
        st.caption("No answers in the analysis for this question.")
with right:
    st.markdown("**The models' predictions**")
    preds = _preds(q["model_predictions"])
    if preds:
        st.dataframe(
            pd.DataFrame(
                {
                    "model": [model_name(p["model_key"]) for p in preds],
                    "prediction": [visible(p.get("predicted")) for p in preds],
                    "probability (%)": [
                        100 * p["probability"] if p.get("probability") is not None else None for p in preds
                    ],
                    "right": [bool(p.get("is_correct")) for p in preds],
                    "proven most probable": [p.get("argmax_proven") for p in preds],
                    "how compared": [COMPARISON.get(p.get("comparison"), p.get("comparison")) for p in preds],
                }
            ),
            hide_index=True,
            key="top1_predictions",
            column_config={
                "probability (%)": st.column_config.NumberColumn("probability (%)", format="%.1f"),
                "right": st.column_config.CheckboxColumn("right"),
                "proven most probable": st.column_config.CheckboxColumn(
                    "proven most probable", help="the search proved no other word is more probable"
                ),
            },
        )
        for p in preds:
            name = model_name(p["model_key"])
            tops = p.get("top_next_tokens")
            probs = p.get("top_next_token_probabilities")
            if tops is not None and probs is not None and len(tops):
                st.markdown(f"**{name}: its most probable next tokens**")
                st.dataframe(
                    pd.DataFrame(
                        {
                            "token": [visible(t) for t in tops],
                            "probability (%)": [100 * x for x in probs],
                            "the true token": [t == q["true_token"] for t in tops],
                        }
                    ),
                    hide_index=True,
                    key=f"top1_tops_{p['model_key']}",
                    column_config={
                        "probability (%)": st.column_config.NumberColumn("probability (%)", format="%.2f"),
                        "the true token": st.column_config.CheckboxColumn("the true token"),
                    },
                )
            else:
                st.caption(
                    f"{name}: no top next tokens in this snapshot (rebuild with `predictabase top1` and "
                    "`predictabase build`)."
                )
            cands = p.get("candidates")
            cprobs = p.get("candidate_probabilities")
            if cands is not None and cprobs is not None and len(cands) > 1:
                st.markdown(f"**{name}: the most probable whole words found**")
                st.dataframe(
                    pd.DataFrame({"word": [visible(c) for c in cands], "probability (%)": [100 * x for x in cprobs]}),
                    hide_index=True,
                    key=f"top1_cands_{p['model_key']}",
                    column_config={"probability (%)": st.column_config.NumberColumn("probability (%)", format="%.2f")},
                )
    else:
        st.caption(
            "No model has a prediction for this question (models with their own tokenizer answer whole-word "
            "questions only)."
        )

labels.related(
    [
        ("app_pages/human_perplexity.py", "Human perplexity: the same players' pairwise guessing game"),
        ("app_pages/next_word.py", "Humans vs models: next word (cloze norms)"),
        ("app_pages/scoreboard.py", "Scoreboard: humans against the best model on every measure"),
    ]
)
