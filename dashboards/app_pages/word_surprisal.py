"""Word surprisal (Oh & Schuler 2024: leading vs trailing whitespace; Pimentel & Meister 2024).

Two definitions of a word's surprisal, both in the marts: leading-whitespace (LW, the usual sum of the
word's token surprisals, the first token carrying the space before the word) and whitespace-trailing (WT,
corrected: the probability that a word boundary follows the word moves into the word, the one before it
out). Reads only the published snapshot's `mart_word_surprisal_summary` and `mart_word_surprisal` (one run's
words at a time), and, for the word table's download, `mart_words_export` (one corpus, pivoted to one row per word
by `predictabase.export`: the file `predictabase export words` writes); computes no metric: it filters, colours
and formats the marts' columns. The one exception is the sentence box, which scores a typed text on demand
through `predictabase.ingest.scoring.sentence.SentenceScorer` (the same scorer and the same SQL as the warehouse),
the model cached per model key and the result per (model, text).
"""

from __future__ import annotations

import functools
import html
import math

import altair as alt
import pandas as pd
import streamlit as st

import charts
import data
import labels
import url_state

WORDS = "mart_word_surprisal"
SUMMARY = "mart_word_surprisal_summary"
EXPORT = "mart_words_export"  # one row per word and run: what `predictabase export words` pivots
CORPUS_INFO = ("corpus", "title", "origin", "source_path", "source_sha256")  # the corpus in the file's provenance
DEFINITIONS = {
    "wt": "WT: whitespace-trailing (corrected, Oh & Schuler 2024)",
    "lw": "LW: leading-whitespace (sum of the word's token surprisals)",
}
SHORT = {"wt": "WT", "lw": "LW"}
COLUMN = {"wt": "surprisal_wt_bits", "lw": "surprisal_lw_bits"}
SOURCES = {
    "scored": "scored here: LW and WT",
    "imported": "imported tokens: LW only",
    "imported_words": "precomputed upstream: LW only",
}
# why a run has no WT, in words
LW_ONLY_WHY = {
    "imported": "its imported token log-probabilities come without the probability that a word boundary "
    "follows, which WT needs",
    "imported_words": "its word surprisals were precomputed upstream and are carried as their authors gave them "
    "(LW), without token-level boundary probabilities",
}
RUN_COLUMNS = [
    "doc_id",
    "word_index",
    "word",
    "n_tokens",
    "is_first_word",
    "surprisal_lw_bits",
    "surprisal_wt_bits",
    "surprisal_wt_minus_lw_bits",
]
N_LABELLED = 10  # words labelled in the scatter and listed below it
# 8 sequential colours (ColorBrewer YlOrRd), low surprisal light; the text on the two darkest is white
PALETTE = ["#ffffcc", "#ffeda0", "#fed976", "#feb24c", "#fd8d3c", "#fc4e2a", "#e31a1c", "#b10026"]
NO_VALUE = "#d9d9d9"
NICE_STEPS = [0.25, 0.5, 1, 2, 2.5, 5, 10, 20, 25, 50]
# Oh & Schuler 2024, Examples 7 and 8 (the SAP benchmark's transitive/intransitive garden path; critical word "took")
AMBIGUOUS = "When the dog scratched the vet with his new assistant took off the muzzle."
UNAMBIGUOUS = "When the dog scratched, the vet with his new assistant took off the muzzle."
CRITICAL = "took"
MAX_SENTENCES = 10
UNALIGNED = "its tokens do not align with the word"
WT_MISSING = f"WT not available: {UNALIGNED}"


def pct(x) -> str:
    return "—" if x is None or pd.isna(x) else f"{100 * x:.1f}%"


def and_join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def doc_key(d) -> tuple:
    """Passages in numeric order ('7' before '12'); their ids are text."""
    return (len(str(d)), str(d))


def is_lw_only(run) -> bool:
    return run["definitions"] != "LW and WT" or not run["n_words_with_wt"]


def visible(token: str) -> str:
    """A token's leading-space marker shown as ␣ (byte-level Ġ, SentencePiece ▁)."""
    return str(token).replace("Ġ", "␣").replace("▁", "␣").replace("Ċ", "↵").replace(" ", "␣")


# ------------------------------------------------------------------ colours: binned, with a legend in bits
def colour_step(values: pd.Series) -> float:
    """The width of one colour bin: a round number such that 8 bins cover the 99th percentile."""
    v = values.dropna()
    top = float(v.quantile(0.99)) if len(v) else 8.0
    return next((s for s in NICE_STEPS if 8 * s >= top), NICE_STEPS[-1])


def colour_bin(value, step: float) -> int | None:
    if value is None or pd.isna(value):
        return None
    return min(len(PALETTE) - 1, max(0, int(math.floor(value / step))))


def bin_label(i: int, step: float) -> str:
    lo = f"{i * step:g}"
    return f"≥ {lo}" if i == len(PALETTE) - 1 else f"{lo}–{(i + 1) * step:g}"


STYLE = (
    "<style>"
    + "".join(f".ws-b{i}{{background:{c};color:{'#ffffff' if i >= 6 else '#000000'}}}" for i, c in enumerate(PALETTE))
    + f".ws-none{{background:{NO_VALUE};color:#555555;font-style:italic}}"
    ".ws-text span{padding:1px 3px;border-radius:3px}"
    # a word is one span: never split across lines (Korean breaks between syllables unless keep-all); aligned
    # where its script starts (Streamlit's markdown aligns left, Hebrew starts at the right)
    ".ws-text{line-height:2.1;font-size:1.02rem;word-break:keep-all;overflow-wrap:break-word;text-align:start}"
    ".ws-legend span{display:inline-block;padding:1px 6px;margin-right:2px;border-radius:3px;font-size:0.85rem}"
    "</style>"
)


def legend_html(step: float, title: str, with_none: bool) -> str:
    swatches = "".join(f'<span class="ws-b{i}">{html.escape(bin_label(i, step))}</span>' for i in range(len(PALETTE)))
    if with_none:
        swatches += '<span class="ws-none">no value</span>'
    return f'<div class="ws-legend"><b>{html.escape(title)}</b>, bits: {swatches}</div>'


def esc(text: str) -> str:
    """HTML-escaped, with characters markdown would read ($ for math, * and _ for emphasis) as entities."""
    return html.escape(str(text), quote=True).replace("$", "&#36;").replace("*", "&#42;").replace("_", "&#95;")


def words_html(
    rows: pd.DataFrame,
    definition: str,
    step: float,
    missing_why,
    wt_missing: str = "WT not available (LW only)",
    lang: str = "",
) -> str:
    """Running text, each word a span coloured by its surprisal, its values in the hover text."""
    spans = []
    for r in rows.itertuples(index=False):
        value = getattr(r, COLUMN[definition])
        b = colour_bin(value, step)
        if pd.isna(r.surprisal_lw_bits):
            tip = f"{r.word}\nno surprisal in this run: {missing_why(r)}"
        else:
            wt = wt_missing if pd.isna(r.surprisal_wt_bits) else f"WT {r.surprisal_wt_bits:.2f} bits"
            d = r.surprisal_wt_minus_lw_bits
            diff = "" if pd.isna(d) else f"\nWT − LW {d:+.2f} bits"
            toks = "" if pd.isna(r.n_tokens) else f"\n{int(r.n_tokens)} token{'s' if r.n_tokens != 1 else ''}"
            tip = f"{r.word}\nLW {r.surprisal_lw_bits:.2f} bits\n{wt}{diff}{toks}"
        cls = "ws-none" if b is None else f"ws-b{b}"
        spans.append(f'<span class="{cls}" title="{esc(tip).replace(chr(10), "&#10;")}">{esc(r.word)}</span>')
    # dir="auto": the text's own direction (Hebrew right to left), from its first letter
    lang_attr = f' lang="{esc(lang)}"' if lang else ""
    return f'<div class="ws-text" dir="auto"{lang_attr}>' + " ".join(spans) + "</div>"


def word_table_csv(corpus: str) -> bytes:
    """`predictabase export words --corpus CORPUS`'s CSV: the corpus's rows of mart_words_export, one row per word
    with every model's columns (predictabase.export.wide, a pivot), after `# ` lines of provenance."""
    import polars as pl

    from predictabase import export

    long = data.rows(EXPORT, where={"corpus": corpus}, arrow=True)
    if long is None:
        raise RuntimeError(f"{EXPORT} is not in the snapshot; rebuild with `predictabase build`")
    info: dict = {"corpus": corpus}
    corpora = data.table(labels.CORPORA_MART)
    if corpora is not None and "corpus" in corpora.columns:
        row = corpora[corpora["corpus"] == corpus]
        if not row.empty:
            info = {k: row.iloc[0][k] for k in CORPUS_INFO if k in row.columns and pd.notna(row.iloc[0][k])}
    table, prov = export.wide(pl.from_arrow(long), info)
    snap = data.table(data.SNAPSHOT_INFO)
    if snap is not None and not snap.empty:
        prov["snapshot"] = {k: str(v) for k, v in snap.iloc[0].items()}
    return export.csv_bytes(table, prov)


# ------------------------------------------------------------------ the finding
st.title("Word surprisal")
summary = data.page_table(
    SUMMARY,
    "The snapshot has no word surprisal yet: score a reading corpus "
    "(`predictabase score -c natural_stories`), then `predictabase build`.",
)
corpora = labels.sorted_corpora(summary["corpus"])  # the shipped corpora first, then a user's, by name
summary = summary.assign(
    _c=summary["corpus"].map({c: i for i, c in enumerate(corpora)}),
    _lw=summary.apply(is_lw_only, axis=1).astype(int),
    _name=summary["model_key"].map(labels.model_name),
    _rank=summary["model_key"].map(labels.model_rank),
)

with_wt = summary[(summary["_lw"] == 0) & summary["share_moved_over_1_bit"].notna()].sort_values(["_rank", "_c"])
if with_wt.empty:
    finding = (
        "No run in this snapshot has whitespace-trailing (WT) word surprisal yet: every run here is LW only "
        "(imported). Score a reading corpus with `predictabase score -c natural_stories`, then "
        "`predictabase build`."
    )
else:
    parts = {
        name: and_join(
            [f"{pct(r.share_moved_over_1_bit)} of {labels.corpus_name(r.corpus)} words" for r in g.itertuples()]
        )
        for name, g in with_wt.groupby("_name", sort=False)
    }
    errors = with_wt["max_text_telescoping_error_nats"]
    if errors.notna().all() and (errors < 1e-6).all():
        tail = "the total surprisal of a text changes only by its final boundary"
    else:
        tail = (
            f"the total surprisal of a text should change only by its final boundary, but differs from that by "
            f"up to {errors.max():.2g} nats"
        )
    if len(parts) == 1:
        [(name, moved)] = parts.items()
        finding = f"Under {name}, correcting for the trailing whitespace moves {moved} by more than 1 bit; {tail}."
    else:
        finding = (
            "Correcting for the trailing whitespace moves words by more than 1 bit ("
            + "; ".join(f"{name}: {moved}" for name, moved in parts.items())
            + f"); {tail}."
        )
st.markdown(finding)
st.caption(
    "From Oh & Schuler, *Leading Whitespaces of Language Models' Subword Vocabulary Pose a Confound "
    "for Calculating Word Probabilities* (EMNLP 2024). **LW**, the common practice: a word's surprisal is the sum of its "
    "tokens' surprisals, the first token carrying the space before the word. **WT**, the correction: the "
    "probability that a word boundary (a token starting a new word, or the end of the text) follows the word "
    "is moved into the word, and the one before it out, so a word after which the model expects the word to "
    "go on (the paper's example: *mat*, which could still become *matron*) gets more surprising and the next "
    "word less. Summed over a text, the "
    "two differ only by the last boundary. All values in bits (nats / ln 2)."
)

# ------------------------------------------------------------------ corpus, model, definition
c1, c2, c3 = st.columns([2, 3, 4])
corpus = url_state.selectbox(  # by default a corpus with a run scored here (LW and WT)
    "Corpus",
    corpora,
    format_func=labels.corpus_name,
    key="ws_corpus",
    param="corpus",
    where=c1,
    default=min(with_wt["corpus"], key=labels.corpus_rank, default=corpora[0]),
)
runs = summary[summary["corpus"] == corpus].sort_values(["_lw", "_rank"]).set_index("model_key", drop=False)
model = url_state.selectbox(
    "Model",
    runs.index,
    key="ws_model",
    param="model",
    where=c2,
    format_func=lambda k: (
        f"{labels.model_name(k)} ({SOURCES.get(runs.loc[k, 'run_source'], runs.loc[k, 'definitions'])})"
    ),
)
definition = url_state.radio(
    "Word surprisal",
    DEFINITIONS,
    format_func=DEFINITIONS.get,
    key="ws_definition",
    param="definition",
    where=c3,
    horizontal=True,
)
run = runs.loc[model]
name, cname = labels.model_name(model), labels.corpus_name(corpus)
lw_only = bool(run["_lw"])
why = LW_ONLY_WHY.get(run["run_source"], "this run has no word-boundary probabilities")
shown = definition
if lw_only and definition == "wt":
    st.warning(
        f"WT is not available for {name} on {cname}: this run is LW only ({why}). The words below are coloured by LW.",
        icon=":material/info:",
    )
    shown = "lw"

if lw_only:
    st.markdown(
        f"{name} on {cname} is **LW only**: {why}. Its mean LW surprisal is "
        f"{run['mean_surprisal_lw_bits']:.2f} bits per word over {int(run['n_words']):,} words; WT is not "
        "available."
    )
else:
    st.markdown(
        f"On {cname} under {name}, WT − LW averages {run['mean_wt_minus_lw_bits']:+.5f} bits per word "
        f"(mean absolute change {run['mean_abs_wt_minus_lw_bits']:.2f} bits); "
        f"{pct(run['share_moved_over_1_bit'])} of its {int(run['n_words_with_wt']):,} words move by more than "
        f"1 bit. The words that move most: {run['words_moving_most']}."
    )

# ------------------------------------------------------------------ the corpus's words, every model, as a file
if EXPORT in (data.marts() or []):
    st.download_button(
        "Download the word table (CSV)",
        functools.partial(word_table_csv, corpus),
        file_name=f"{corpus}_words.csv",
        mime="text/csv",
        key="ws_download",
        icon=":material/download:",
        on_click="ignore",
        help=f"The same file as `predictabase export words --corpus {corpus} --out {corpus}_words.csv`.",
    )
    st.caption(
        f"One row per word of {cname}, with every model's LW and WT surprisal (bits and nats) and its "
        "word-boundary log-probabilities (nats), the word's length (characters) and frequency (Zipf: log10 "
        "per billion words), its mean reading times (ms) and cloze probability where the corpus has them. "
        "The first lines, starting with `# `, say where the values come from (the snapshot, each model's "
        'revision, run and settings): read it with `read.csv(f, comment.char = "#")` in R or '
        '`pandas.read_csv(f, comment="#")`.'
    )
else:
    st.caption(
        f"No word table to download: this snapshot has no `{EXPORT}` yet (it was built before the word table "
        "existed); rebuild with `predictabase build`."
    )

# ------------------------------------------------------------------ a passage as running text
st.subheader("A passage, word by word")
all_words = data.rows(WORDS, ["doc_id", "word_index", "word"], {"corpus": corpus, "used_in_marts": True})
run_words = data.rows(WORDS, RUN_COLUMNS, {"corpus": corpus, "run_id": run["run_id"]}, ["doc_id", "word_index"])
if all_words is None or run_words is None:
    data.missing(WORDS)
    st.stop()
if run_words.empty:
    st.info(f"{WORDS} has no words of {name} on {cname}; rebuild with `predictabase build`.")
    st.stop()
all_words = all_words.drop_duplicates(["doc_id", "word_index"]).sort_values(["doc_id", "word_index"])
first_words = all_words[all_words["word_index"] < 10].groupby("doc_id")["word"].agg(" ".join)
docs = sorted(first_words.index, key=doc_key)
n_words_of = all_words.groupby("doc_id").size()
doc = url_state.selectbox(
    "Passage",
    docs,
    key="ws_passage",
    param="passage",
    format_func=lambda d: f"{d}: {first_words[d]}{' …' if n_words_of[d] > 10 else ''} ({n_words_of[d]:,} words)",
)

step = colour_step(pd.concat([run_words["surprisal_lw_bits"], run_words["surprisal_wt_bits"]]))
passage = all_words[all_words["doc_id"] == doc][["word_index", "word"]].merge(
    run_words[run_words["doc_id"] == doc].drop(columns=["doc_id", "word"]), on="word_index", how="left"
)


def missing_why(r) -> str:
    if run["run_source"] == "imported_words" and r.word_index == 0:
        return "the upstream file has none for the first word of a sentence"
    if run["run_source"] == "imported" and r.word_index == 0:
        return "the imported log-probabilities leave the first token of a text unscored"
    return UNALIGNED if run["run_source"] == "scored" else "none in the mart for this word"


corpora_info = data.table(labels.CORPORA_MART)  # the corpus's language, for the passage's lang attribute
lang = (
    ""
    if corpora_info is None or "language" not in corpora_info.columns
    else next((str(v) for v in corpora_info.loc[corpora_info["corpus"] == corpus, "language"] if pd.notna(v)), "")
)
has_none = bool(passage[COLUMN[shown]].isna().any())
wt_missing = "WT not available (LW only)" if lw_only else WT_MISSING
st.markdown(
    STYLE
    + legend_html(step, DEFINITIONS[shown], has_none)
    + words_html(passage, shown, step, missing_why, wt_missing, lang),
    unsafe_allow_html=True,
)
st.caption(
    f"Passage {doc} of {cname}, {len(passage):,} words, coloured by {SHORT[shown]} surprisal under {name} "
    "(the colour scale is the same for both definitions and every passage of this corpus and model). Hover "
    "over a word for its LW and WT surprisal, their difference and its number of tokens."
)

# ------------------------------------------------------------------ WT against LW
st.subheader("WT against LW, every word")
if lw_only:
    st.info(
        f"WT is not available for {name} on {cname} ({why}), so there is nothing to plot against LW. Pick a "
        "model scored here (LW and WT).",
        icon=":material/info:",
    )
else:
    pts = run_words.dropna(subset=["surprisal_lw_bits", "surprisal_wt_bits"]).copy()
    order = pts["surprisal_wt_minus_lw_bits"].abs().sort_values(ascending=False, kind="stable").index
    top = pts.loc[order[:N_LABELLED]]
    BIG, SMALL, MOST = (
        "moves by more than 1 bit",
        "moves by 1 bit or less",
        f"one of the {N_LABELLED} words that move most (labelled)",
    )
    pts["group"] = (pts["surprisal_wt_minus_lw_bits"].abs() > 1).map({True: BIG, False: SMALL})
    pts.loc[top.index, "group"] = MOST
    pts["passage"] = pts["doc_id"]
    top = pts.loc[top.index]
    axis_max = math.ceil(max(pts["surprisal_lw_bits"].max(), pts["surprisal_wt_bits"].max()) / 5) * 5
    scale = alt.Scale(domain=[0, axis_max], nice=False)
    x = alt.X("surprisal_lw_bits:Q", title="LW surprisal (bits): sum of the word's token surprisals", scale=scale)
    y = alt.Y("surprisal_wt_bits:Q", title="WT surprisal (bits): corrected for the trailing whitespace", scale=scale)
    groups = [SMALL, BIG, MOST]
    color = alt.Color(
        "group:N",
        scale=alt.Scale(domain=groups, range=["#9db4d3", "#e08214", "#b10026"]),
        legend=alt.Legend(title="words", orient="bottom", direction="vertical", labelLimit=500),
    )
    tooltip = [
        alt.Tooltip("word:N", title="word"),
        alt.Tooltip("passage:N", title="passage"),
        alt.Tooltip("surprisal_lw_bits:Q", title="LW surprisal (bits)", format=".2f"),
        alt.Tooltip("surprisal_wt_bits:Q", title="WT surprisal (bits)", format=".2f"),
        alt.Tooltip("surprisal_wt_minus_lw_bits:Q", title="WT − LW (bits)", format="+.2f"),
    ]
    cols = ["word", "passage", "surprisal_lw_bits", "surprisal_wt_bits", "surprisal_wt_minus_lw_bits", "group"]
    points = alt.Chart(pts[cols]).mark_circle(size=18, opacity=0.65).encode(x=x, y=y, color=color, tooltip=tooltip)
    texts = (
        alt.Chart(top[cols])
        .mark_text(align="left", dx=6, dy=-6, fontSize=12, fontWeight="bold")
        .encode(x=x, y=y, text="word:N", color=color, tooltip=tooltip)
    )
    DIAGONAL = "WT = LW (the correction changes nothing)"
    diagonal = (
        alt.Chart(
            pd.DataFrame(
                {"surprisal_lw_bits": [0, axis_max], "surprisal_wt_bits": [0, axis_max], "line": [DIAGONAL, DIAGONAL]}
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
        alt.layer(diagonal, points, texts).properties(height=560),
        f"WT against LW surprisal (bits): {len(pts):,} words of {cname} under {name}",
        f"A scatter plot of every word's whitespace-trailing (WT) against its leading-whitespace (LW) "
        f"surprisal in bits, the {N_LABELLED} words that move most labelled; on the dashed diagonal the "
        "correction changes nothing.",
        subtitle="one point per word; above the diagonal: WT is higher",
    )
    nxt = all_words.assign(word_index=all_words["word_index"] - 1).rename(columns={"word": "next"})
    movers = top.merge(nxt, on=["doc_id", "word_index"], how="left")
    st.markdown(
        f"**The {N_LABELLED} words that move most.** The correction moves a word's surprisal up when the "
        "model did not expect a word boundary after it (it expected the word to go on, or punctuation), and "
        "the next word's down by about as much."
    )
    st.dataframe(
        pd.DataFrame(
            {
                "word": movers["word"],
                "next word": movers["next"].fillna("(end of the passage)"),
                "passage": movers["doc_id"],
                "position in the passage": movers["word_index"],
                labels.header("surprisal_lw_bits"): movers["surprisal_lw_bits"],
                labels.header("surprisal_wt_bits"): movers["surprisal_wt_bits"],
                labels.header("surprisal_wt_minus_lw_bits"): movers["surprisal_wt_minus_lw_bits"],
                "tokens": movers["n_tokens"],
            }
        ),
        hide_index=True,
        key="ws_movers",
        column_config={
            h: st.column_config.NumberColumn(h, format="%.2f")
            for h in (
                labels.header(c) for c in ("surprisal_lw_bits", "surprisal_wt_bits", "surprisal_wt_minus_lw_bits")
            )
        },
    )

# ------------------------------------------------------------------ every model on this corpus
st.subheader(f"Every model on {cname}")
tab = runs.reset_index(drop=True)
# a run marked LW only shows no WT number (its row showed WT values next to "LW only")
_wt = ["mean_surprisal_wt_bits", "mean_wt_minus_lw_bits", "mean_abs_wt_minus_lw_bits", "share_moved_over_1_bit"]
tab[_wt] = tab[_wt].mask(tab["_lw"].astype(bool))
table = pd.DataFrame(
    {
        "model": tab["_name"],
        "source of the run": tab["run_source"].map(SOURCES).fillna(tab["run_source"]),
        labels.header("n_words"): tab["n_words"],
        labels.header("mean_surprisal_lw_bits"): tab["mean_surprisal_lw_bits"],
        labels.header("mean_surprisal_wt_bits"): tab["mean_surprisal_wt_bits"],
        labels.header("mean_wt_minus_lw_bits"): tab["mean_wt_minus_lw_bits"],
        labels.header("mean_abs_wt_minus_lw_bits"): tab["mean_abs_wt_minus_lw_bits"],
        labels.header("share_moved_over_1_bit"): 100 * tab["share_moved_over_1_bit"],
        labels.header("share_multitoken"): 100 * tab["share_multitoken"],
        labels.header("words_moving_most"): tab["words_moving_most"].fillna("WT not available (LW only)"),
        labels.header("max_text_telescoping_error_nats"): tab["max_text_telescoping_error_nats"],
    }
)
labels.frame(
    table,
    title="Word surprisal by model, LW and WT",
    key="ws_summary",
    column_config={
        h: st.column_config.NumberColumn(h, format=labels.COLUMNS[c][1])
        for c, h in (
            (c, labels.header(c))
            for c in (
                "n_words",
                "mean_surprisal_lw_bits",
                "mean_surprisal_wt_bits",
                "mean_wt_minus_lw_bits",
                "mean_abs_wt_minus_lw_bits",
                "share_moved_over_1_bit",
                "share_multitoken",
                "max_text_telescoping_error_nats",
            )
        )
    },
)
st.caption(
    "Empty WT cells: the run is LW only (imported). The UCL word surprisals precomputed upstream have no "
    "value for the first word of a sentence, so they count fewer words."
)

# ------------------------------------------------------------------ type a sentence
st.subheader("Type a sentence")
scored = summary[summary["run_source"] == "scored"].drop_duplicates("model_key").sort_values("_rank")
if scored.empty:
    st.info("No model has been scored here yet (`predictabase score`), so there is no model to score a sentence with.")
    st.stop()
scored = scored.set_index("model_key", drop=False)


@st.cache_resource(show_spinner=False, max_entries=2)
def sentence_scorer(model_key: str, spec: str):
    """One loaded model per model key (kept across reruns and sessions)."""
    from predictabase.core.config import paths
    from predictabase.ingest.scoring.sentence import SentenceScorer

    return SentenceScorer(spec, paths(data.marts_path().parent))


@st.cache_data(show_spinner=False, max_entries=256)
def sentence_surprisals(model_key: str, spec: str, text: str) -> pd.DataFrame:
    return sentence_scorer(model_key, spec).word_surprisals(text).to_pandas()


def model_spec(model_key: str, model_id: str) -> str | None:
    """What the scorer loads: the alias of a packaged model, a hub id, or the folder or file this machine scored a
    local model from (its record beside the warehouse's refresh state; the marts name it by its portable id only).
    None when this machine does not have the model."""
    from predictabase.core.config import paths
    from predictabase.ingest.scoring.model_identity import load_spec

    return load_spec(paths(data.marts_path().parent), model_key, model_id)


left, right = st.columns([3, 1])
text = left.text_area("Sentences, one per line", f"{AMBIGUOUS}\n{UNAMBIGUOUS}", key="ws_text", height=110)
sentence_model = right.selectbox(
    "Model",
    scored.index.tolist(),
    format_func=labels.model_name,
    key="ws_sentence_model",
    help="The models scored in this warehouse.",
)
if right.button("Score the sentences", key="ws_score", type="primary"):
    st.session_state["ws_scoring"] = True
st.caption(
    "Prefilled with Oh & Schuler's (2024) Examples 7 and 8: an ambiguous (garden-path) sentence and its unambiguous "
    "control, a transitive/intransitive item of the SAP benchmark (Huang et al. 2024) as the paper uses it. "
    f"The critical word is *{CRITICAL}*, where the reader learns that *the vet* is not the object of "
    "*scratched*. The model is loaded on the first click (this can take a few seconds); after that every "
    "edit is scored as you go."
)

if st.session_state.get("ws_scoring"):
    from predictabase.core.errors import OptionError, PredictabaseError

    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    results: list[tuple[str, pd.DataFrame]] = []
    model_id = str(scored.loc[sentence_model, "model_id"])
    spec = None

    def shown(message: str) -> str:
        """An error as the page shows it: the model named by its portable id, never by its folder here."""
        return message.replace(spec, model_id) if spec and spec != model_id else message

    try:
        if not lines:
            raise OptionError("text", "is empty; type a sentence (one per line)")
        if len(lines) > MAX_SENTENCES:
            raise OptionError("text", f"has {len(lines)} sentences; at most {MAX_SENTENCES}, one per line")
        spec = model_spec(sentence_model, model_id)
        if spec is None:
            st.warning(
                f"{labels.model_name(sentence_model)} ({model_id}) is not on this machine: it was scored "
                "from a local folder or file that is not here, so it cannot score typed sentences; pick "
                "another model.",
                icon=":material/warning:",
            )
        else:
            with st.spinner(f"Scoring with {labels.model_name(sentence_model)} …"):
                results = [(ln, sentence_surprisals(sentence_model, spec, ln)) for ln in lines]
    except PredictabaseError as exc:
        st.error(shown(str(exc)), icon=":material/error:")
    except Exception as exc:  # noqa: BLE001 - one line, never a traceback
        st.error(shown(f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"), icon=":material/error:")
    if results:
        both = pd.concat([r for _, r in results])
        s_step = colour_step(pd.concat([both["surprisal_lw_bits"], both["surprisal_wt_bits"]]))
        blocks = []
        for i, (_ln, res) in enumerate(results, 1):
            for d in ("lw", "wt"):
                blocks.append(
                    f"<div><b>{i} · {SHORT[d]}</b> "
                    + words_html(res, d, s_step, lambda r: UNALIGNED, WT_MISSING)
                    + "</div>"
                )
        st.markdown(STYLE + legend_html(s_step, "LW and WT surprisal", False) + "".join(blocks), unsafe_allow_html=True)
        by_text = dict(results)
        if AMBIGUOUS in by_text and UNAMBIGUOUS in by_text:
            amb = by_text[AMBIGUOUS].set_index("word")
            una = by_text[UNAMBIGUOUS].set_index("word")
            if CRITICAL in amb.index and CRITICAL in una.index:
                a, u = amb.loc[CRITICAL], una.loc[CRITICAL]
                st.markdown(
                    f"At the critical word *{CRITICAL}*, {labels.model_name(sentence_model)} finds the ambiguous "
                    f"sentence more surprising than the unambiguous one by "
                    f"{a['surprisal_lw_bits'] - u['surprisal_lw_bits']:.2f} bits under LW "
                    f"({a['surprisal_lw_bits']:.2f} vs {u['surprisal_lw_bits']:.2f}) and by "
                    f"{a['surprisal_wt_bits'] - u['surprisal_wt_bits']:.2f} bits under WT "
                    f"({a['surprisal_wt_bits']:.2f} vs {u['surprisal_wt_bits']:.2f}): the garden-path effect as "
                    "surprisal estimates it (Oh & Schuler 2024 find it smaller under WT)."
                )
        for i, (ln, res) in enumerate(results, 1):
            st.markdown(f"**{i}.** {esc(ln)}")
            st.dataframe(
                pd.DataFrame(
                    {
                        "word": res["word"],
                        "tokens": res["tokens"].map(lambda ts: " ".join(visible(t) for t in ts)),
                        labels.header("surprisal_lw_bits"): res["surprisal_lw_bits"],
                        labels.header("surprisal_wt_bits"): res["surprisal_wt_bits"],
                        labels.header("surprisal_wt_minus_lw_bits"): res["surprisal_wt_minus_lw_bits"],
                    }
                ),
                hide_index=True,
                key=f"ws_sentence_{i}",
                column_config={
                    h: st.column_config.NumberColumn(h, format="%.2f")
                    for h in (
                        labels.header(c)
                        for c in ("surprisal_lw_bits", "surprisal_wt_bits", "surprisal_wt_minus_lw_bits")
                    )
                },
            )
        st.caption(
            "Tokens: the model's tokens of each word, ␣ marking the space a token starts with. The last "
            "word's WT includes the probability that the text ends there."
        )

labels.related(
    [
        ("app_pages/reading_times.py", "Reading times: does WT surprisal explain reading better than LW?"),
        ("app_pages/next_word.py", "Humans vs models: next word (WT word probabilities vs people's)"),
        ("app_pages/perplexity.py", "Perplexity by model and corpus"),
    ]
)
