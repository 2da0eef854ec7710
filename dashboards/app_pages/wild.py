"""Prompts in the wild (Casares et al. 2022, AAAI): is using GPT-3 cheaper than doing the task?

Reads only the published snapshot's wild marts; computes nothing (pivots, filters and formats only).
The prompts, completions and answers are shown inside the app only.
"""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

import charts
import data
import findings
import labels
import url_state

st.title("Prompts in the wild")
_loss = data.table("mart_wild_loss")
if _loss is not None and not _loss.empty:
    # the finding: the mean loss with and without GPT-3 in each task domain, and the mart's test (Table 1)
    _said = findings.wild(_loss)
    if _said:
        st.markdown(_said)
st.caption(
    "From Casares et al., *How General-Purpose Is a Language Model? Usefulness and Safety with Human "
    "Prompters in the Wild* (AAAI-22): 36 people solved 12 task instances with GPT-3 "
    "(writing prompts, extracting and rating its answers), 34 others solved them by hand. "
    "Effort in seconds (medians); loss L_H = 1 - (s - 1)/4 from the respondent's own 1-5 usefulness score s "
    "(means). Effort terms: D_H devising the prompt, W_H wrapping the input into it, U_H unwrapping the "
    "answer from GPT-3's completion, V_H validating that answer, G_H solving the task by hand; cost C_H "
    "solving alone and C_H,M with the model."
)

CONDITION = {"with_model": "with GPT-3", "without_model": "without (by hand)"}
VARIABLE = {
    "age_years": "age",
    "eng_level_code": "English level (1 native .. 4 basic)",
    "gpt3_familiarity": "LM familiarity (0-4)",
    "assistants_code": "assistants (1 yes, 2 no)",
    "devising_s": "D_H devising (s)",
    "wrapping_s": "W_H wrapping (s)",
    "unwrapping_s": "U_H unwrapping (s)",
    "validating_s": "V_H validating (s)",
    "solving_s": "G_H solving (s)",
    "loss_mean": "L_H loss",
}


effort = data.page_table(
    "mart_wild_effort",
    "The snapshot has no questionnaire data yet: `predictabase ingest wild`, then `predictabase build`.",
)
# the task domains in questionnaire order, as the mart publishes them
DOMAINS = effort.drop_duplicates("domain").sort_values("domain_order")["domain"].tolist()

# ------------------------------------------------------------------ effort (Fig. 4)
st.subheader("Effort with and without the model (Fig. 4)")
bars = effort[effort["in_figure4"]].copy()
bars["condition_label"] = bars["condition"].map(CONDITION)
# "devising D_H", ...: the component and its cost term (mart columns), in the mart's stacking order
bars["component_label"] = bars["component"] + " " + bars["cost_term"]
components = bars.sort_values("component_order")["component_label"].drop_duplicates().tolist()
chart = (
    alt.Chart(bars)
    .mark_bar()
    .encode(
        y=alt.Y("domain:N", sort=DOMAINS, title=None),
        yOffset=alt.YOffset("condition_label:N", sort=list(CONDITION.values())),
        x=alt.X("sum(median_s):Q", title="median effort per instance (s); D_H once per task", stack="zero"),
        color=alt.Color("component_label:N", sort=components, title="component"),
        order=alt.Order("component_order:Q"),
        tooltip=[
            alt.Tooltip("domain:N", title="task domain"),
            alt.Tooltip("condition_label:N", title="condition"),
            alt.Tooltip("component_label:N", title="component"),
            alt.Tooltip("median_s:Q", title="median (s)"),
            alt.Tooltip("n_measurements:Q", title="measurements"),
        ],
    )
    .properties(height=320)
)
charts.show(
    chart,
    "Median effort per task instance, with and without GPT-3 (seconds)",
    "Stacked bars: for each task domain, the median seconds spent on each component of the work, with GPT-3 "
    "(upper bar) and by hand (lower bar).",
    subtitle="medians; D_H counted once per task",
)
st.caption(
    "Upper bar of each pair: with GPT-3 (D_H = median first-instance prompting time minus W_H); "
    "lower: by hand. Medians, not means, because some respondents paused mid-form."
)
table = effort.pivot_table(index=["domain_order", "domain"], columns="component", values="median_s").reset_index()
cols = [
    c
    for c in [
        "domain",
        "devising",
        "wrapping",
        "prompting_first_instance",
        "unwrapping",
        "validating",
        "solving",
        "self_rating",
    ]
    if c in table.columns
]
EFFORT_HEADERS = {
    "domain": "task domain",
    "devising": "D_H devising the prompt (s)",
    "wrapping": "W_H wrapping the input (s)",
    "prompting_first_instance": "prompting, first instance (s)",
    "unwrapping": "U_H unwrapping the answer (s)",
    "validating": "V_H validating the answer (s)",
    "solving": "G_H solving by hand (s)",
    "self_rating": "rating one's own answer (s)",
}
labels.frame(
    table[cols], title="Median effort per task instance (seconds)", key="wild_effort", column_config=EFFORT_HEADERS
)

cost = data.table("mart_wild_cost")
if cost is not None and not cost.empty:
    st.markdown("**Costs C_H (Eq. 2) and C_H,M (Eq. 3) for the three instances of each task**")
    w = cost.iloc[0]
    st.caption(
        f"Weights alpha={w['alpha']:g}, beta={w['beta']:g}, gamma={w['gamma']:g}, delta={w['delta']:g} "
        "(the paper's; the build takes others as settings). Cost units = loss + weighted seconds."
    )
    show = cost.sort_values("domain_order")[
        ["domain", "effort_h_s", "effort_h_m_s", "c_h", "c_h_m", "gain_c_h_m_minus_c_h"]
    ]
    labels.frame(
        show,
        title="Costs alone and with GPT-3 per task",
        key="wild_cost",
        column_config={
            "domain": "task domain",
            "effort_h_s": "effort alone (s)",
            "effort_h_m_s": "effort with GPT-3 (s)",
            "c_h": "C_H cost alone",
            "c_h_m": "C_H,M cost with GPT-3",
            "gain_c_h_m_minus_c_h": "C_H,M - C_H (negative: GPT-3 cheaper)",
        },
    )

# ------------------------------------------------------------------ loss (Table 1)
st.subheader("Loss with and without the model (Table 1)")
loss = data.section("mart_wild_loss")
if loss is not None:
    wide = loss.pivot_table(
        index=["domain_order", "domain"], columns="condition", values=["loss_mean", "paper_loss_mean"]
    ).reset_index()
    wide.columns = ["_".join(c for c in col if c) for col in wide.columns]
    tests = loss.drop_duplicates("domain")[
        ["domain", "test", "alternative", "p_value", "p_value_holm", "paper_p_value_holm", "p_value_two_sided_holm"]
    ]
    t1 = wide.merge(tests, on="domain").sort_values("domain_order").drop(columns="domain_order")
    t1["test"] = t1["test"].map({"mann_whitney_u": "Mann-Whitney U", "t_test": "Student's t"}).fillna(t1["test"])
    t1["alternative"] = (
        t1["alternative"]
        .map(
            {
                "greater": "loss with GPT-3 greater",
                "less": "loss with GPT-3 less",
                "two-sided": "two-sided",
                "two_sided": "two-sided",
            }
        )
        .fillna(t1["alternative"])
    )
    labels.frame(
        t1,
        title="Loss with and without GPT-3 (Table 1)",
        key="wild_loss",
        column_config={
            "domain": "task domain",
            "test": "test",
            "alternative": "one-sided alternative",
            "loss_mean_with_model": ("L_H with GPT-3", "%.3f"),
            "loss_mean_without_model": ("L_H by hand", "%.3f"),
            "paper_loss_mean_with_model": ("paper: GPT-3", "%.2f"),
            "paper_loss_mean_without_model": ("paper: human", "%.2f"),
            "p_value": ("p (uncorrected)", "%.2e"),
            "p_value_holm": ("p (Holm)", "%.2e"),
            "paper_p_value_holm": ("paper: p (Holm)", "%.2g"),
            "p_value_two_sided_holm": ("p two-sided (Holm)", "%.2e"),
        },
    )
    st.caption(
        "Test per domain chosen from Shapiro (each condition) and Levene p-values: Student's t when all "
        f"exceed {loss['normality_alpha'].iloc[0]:g}, else Mann-Whitney U; one observation per respondent "
        "(mean over the three instances); Holm correction across domains."
    )

# ------------------------------------------------------------------ correlations (Fig. 3)
st.subheader("Spearman correlations: demographics vs effort and loss (Fig. 3)")
corr = data.section("mart_wild_correlations")
if corr is not None:
    left, right = st.columns(2)
    with left:
        cond = url_state.radio(
            "Group", CONDITION, format_func=CONDITION.get, horizontal=True, key="wild_corr_cond", param="group"
        )
    with right:
        scope = url_state.selectbox(
            "Averaged over",
            ["all"] + DOMAINS,
            key="wild_corr_scope",
            param="averaged_over",
            format_func=lambda d: "all tasks" if d == "all" else d,
        )
    m = corr[(corr["condition"] == cond) & (corr["domain"] == scope)].copy()
    order = [VARIABLE.get(v, v) for v in dict.fromkeys(m["variable_x"])]
    m["x"] = m["variable_x"].map(lambda v: VARIABLE.get(v, v))
    m["y"] = m["variable_y"].map(lambda v: VARIABLE.get(v, v))
    base = alt.Chart(m).encode(
        x=alt.X("x:N", sort=order, title=None, axis=alt.Axis(labelLimit=400, labelAngle=-40, labelOverlap=False)),
        y=alt.Y("y:N", sort=order, title=None, axis=alt.Axis(labelLimit=400, labelOverlap=False)),
    )
    heat = base.mark_rect().encode(
        color=alt.Color(
            "spearman_rho:Q", scale=alt.Scale(scheme="redblue", domain=[-1, 1], reverse=True), title="Spearman rho"
        ),
        tooltip=[
            alt.Tooltip("x:N", title="variable"),
            alt.Tooltip("y:N", title="correlated with"),
            alt.Tooltip("spearman_rho:Q", title="Spearman rho", format=".2f"),
            alt.Tooltip("p_value:Q", title="p (two-sided, uncorrected)", format=".3g"),
            alt.Tooltip("n_respondents:Q", title="respondents"),
        ],
    )
    # black on the pale cells, white on the dark ones, in either theme
    text = base.mark_text(fontSize=11).encode(
        text=alt.Text("spearman_rho:Q", format=".2f"),
        color=alt.condition("abs(datum.spearman_rho) > 0.5", alt.value("#ffffff"), alt.value("#000000")),
    )
    charts.show(
        (heat + text).properties(height=420),
        f"Spearman correlations, {CONDITION[cond]}",
        "A heat map of the Spearman rank correlations (from -1, blue, to 1, red) between the respondents' "
        "demographics, effort and loss, each cell labelled with its value.",
        subtitle="all tasks" if scope == "all" else scope,
    )
    st.caption("Two-sided p-values in the tooltip (uncorrected). Group B was not asked about LMs or assistants.")

# ------------------------------------------------------------------ loss vs difficulty (Fig. 5)
st.subheader("Loss against difficulty (Fig. 5, self-assessed L_H)")
diff = data.section("mart_wild_loss_by_difficulty")
if diff is not None:
    d = diff.copy()
    d["condition_label"] = d["condition"].map(CONDITION)
    enc = dict(x=alt.X("difficulty:O", title="difficulty h"), color=alt.Color("condition_label:N", title="condition"))
    line = (
        alt.Chart(d)
        .mark_line(point=True)
        .encode(
            y=alt.Y("loss_mean:Q", title="mean loss L_H", scale=alt.Scale(domain=[0, 1])),
            tooltip=[
                alt.Tooltip("domain:N", title="task domain"),
                alt.Tooltip("difficulty:O", title="difficulty"),
                alt.Tooltip("condition_label:N", title="condition"),
                alt.Tooltip("loss_mean:Q", title="mean loss L_H (0 best, 1 worst)", format=".3f"),
                alt.Tooltip("n_ratings:Q", title="ratings"),
            ],
            **enc,
        )
    )
    band = (
        alt.Chart(d)
        .mark_errorbar()
        .encode(y=alt.Y("loss_ci95_low:Q", title="mean loss L_H"), y2="loss_ci95_high:Q", **enc)
    )
    # two domains a row, the legend under them: the four side by side were 958 px wide, past the column
    charts.show(
        alt.layer(band, line)
        .properties(width=170, height=200)
        .facet(facet=alt.Facet("domain:N", sort=DOMAINS, title=None), columns=2)
        .configure_legend(orient="bottom"),
        "Mean self-assessed loss L_H by difficulty, with and without GPT-3",
        "One panel per task domain: the mean self-assessed loss (0 to 1) at each difficulty level, with GPT-3 "
        "and by hand, with 95% intervals.",
        subtitle="loss 0 (best) to 1; bars: 95% intervals",
        width="content",
    )
    st.caption(
        "The paper's Fig. 5 plots the externally evaluated loss L_E, which was not published; "
        "this is the self-assessed L_H (the paper's appendix view). Bars: 95% normal intervals."
    )

# ------------------------------------------------------------------ browser
st.subheader("Browse prompts, completions and answers")
texts = data.section("mart_wild_texts")
if texts is not None:
    c1, c2, c3 = st.columns(3)
    with c1:
        domain = url_state.selectbox("Task", DOMAINS, key="wild_domain", param="task")
    with c2:
        instance = url_state.selectbox("Instance (difficulty)", [1, 2, 3], key="wild_instance", param="instance")
    with c3:
        cond = url_state.radio(
            "Condition", CONDITION, format_func=CONDITION.get, key="wild_browse_cond", param="condition"
        )
    sel = texts[(texts["domain"] == domain) & (texts["instance"] == instance) & (texts["condition"] == cond)]
    sel = sel.sort_values("respondent_id")
    if sel.empty:
        st.info("No answers for this selection.")
    else:
        rid = url_state.selectbox("Respondent", sel["respondent_id"], key="wild_respondent", param="respondent")
        row = sel[sel["respondent_id"] == rid].iloc[0]
        meta = {
            "usefulness (1-5)": row["usefulness_score"],
            "loss L_H": row["loss"],
            "age": row["age_years"],
            "English": row["eng_level"],
        }
        st.caption(
            " · ".join(
                f"{k}: {v:g}" if isinstance(v, (int, float)) else f"{k}: {v}" for k, v in meta.items() if pd.notna(v)
            )
        )
        if cond == "with_model":
            st.markdown(f"**Prompt** ({row['prompting_s']:g} s)")
            st.text(row["prompt_text"] or "")
            st.markdown("**GPT-3 completion**")
            st.text(row["completion_text"] or "")
            st.markdown(f"**Extracted answer** ({row['unwrapping_s']:g} s; rated in {row['validating_s']:g} s)")
            st.text(row["extracted_answer_text"] or "")
        else:
            solving = row["solving_s"]
            st.markdown(f"**Own answer** ({solving:g} s)" if pd.notna(solving) else "**Own answer**")
            st.text(row["own_answer_text"] or "")
        with st.expander("All answers to this instance"):
            cols = (
                ["respondent_id", "usefulness_score", "prompt_text", "completion_text", "extracted_answer_text"]
                if cond == "with_model"
                else ["respondent_id", "usefulness_score", "own_answer_text"]
            )
            st.dataframe(
                sel[cols].fillna({c: "" for c in cols if sel[c].dtype == object}),
                hide_index=True,
                column_config={
                    "respondent_id": "respondent",
                    "usefulness_score": "usefulness (1-5)",
                    "prompt_text": "prompt",
                    "completion_text": "GPT-3 completion",
                    "extracted_answer_text": "extracted answer",
                    "own_answer_text": "own answer",
                },
            )

labels.related(
    [
        ("app_pages/scoreboard.py", "Scoreboard: humans against the best model on every measure"),
        ("app_pages/next_word.py", "Humans vs models: next word"),
    ]
)
