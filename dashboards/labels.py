"""Display labels (with units) and number formats for mart columns. Formatting only; the one read is the
corpora's names for people (a user's corpus has its title in the snapshot's `mart_corpora`), through data.py."""
from __future__ import annotations

import os
from collections.abc import Iterable

import pandas as pd
import streamlit as st

import data
import downloads
from ingest import corpus_table
from ingest.scoring import model_table
from predictabase import collect

CORPORA_MART = "mart_corpora"  # one row per corpus: corpus, title, origin ('shipped' | 'user'), ...

# column -> (header with unit, format or None for text/default)
COLUMNS: dict[str, tuple[str, str | None]] = {
    # perplexity mart
    "model_key": ("model", None),
    "model_name": ("model", None),
    "corpus_title": ("corpus", None),
    "corpus": ("corpus", None),
    "run_id": ("run", None),
    "model_id": ("model id", None),
    "model_revision": ("model revision", None),
    "tokenizer": ("tokenizer", None),
    "source": ("source", None),
    "vocab_size": ("vocabulary (tokens)", "%d"),
    "n_docs": ("documents", "%d"),
    "n_tokens": ("tokens", "%d"),
    "n_words": ("words", "%d"),
    "n_chars": ("characters", "%d"),
    "n_bytes": ("bytes (UTF-8)", "%d"),
    "vocab_size_source": ("vocabulary size from", None),
    "total_surprisal_nats": ("total surprisal (nats)", "%.1f"),
    "total_surprisal_bits": ("total surprisal (bits)", "%.1f"),
    "mean_surprisal_nats_ci_low": ("mean surprisal 95% CI low (nats/token)", "%.3f"),
    "mean_surprisal_nats_ci_high": ("mean surprisal 95% CI high (nats/token)", "%.3f"),
    "bootstrap_replicates": ("bootstrap replicates", "%d"),
    "bits_per_byte_ci_low": ("bits per byte 95% CI low (bits/byte)", "%.3f"),
    "bits_per_byte_ci_high": ("bits per byte 95% CI high (bits/byte)", "%.3f"),
    "mean_surprisal_nats": ("mean surprisal (nats/token)", "%.3f"),
    "mean_surprisal_bits": ("mean surprisal (bits/token)", "%.3f"),
    "token_perplexity": ("token perplexity (per token)", "%.2f"),
    "token_perplexity_ci_low": ("token perplexity 95% CI low", "%.2f"),
    "token_perplexity_ci_high": ("token perplexity 95% CI high", "%.2f"),
    "bits_per_byte": ("bits per byte (bits/byte)", "%.3f"),
    "bits_per_char": ("bits per char (bits/char)", "%.3f"),
    "word_perplexity": ("word perplexity (per word)", "%.2f"),
    "bits_per_word": ("bits per word (bits/word)", "%.3f"),
    "normalized_perplexity": ("normalized perplexity (perplexity / vocabulary size)", "scientific"),
    "built_at": ("built at (UTC)", None),
    # scoreboard (mart_scoreboard_gaps, mart_scoreboard_long)
    "comparison_label": ("comparison", None),
    "unit": ("unit", None),
    "humans_value": ("humans", "%.4g"),
    "humans_ci_low": ("humans: interval low", "%.4g"),
    "humans_ci_high": ("humans: interval high", "%.4g"),
    "best_display_name": ("best model", None),
    "best_value": ("best model's value", "%.4g"),
    "best_ci_low": ("best model: interval low", "%.4g"),
    "best_ci_high": ("best model: interval high", "%.4g"),
    "best_value_origin": ("best model's value from", None),
    "gap_kind": ("gap (humans vs model) as", None),
    "gap": ("gap", "%.4g"),
    "gap_ci_low": ("gap: approximate 95% interval low", "%.4g"),
    "gap_ci_high": ("gap: approximate 95% interval high", "%.4g"),
    "n_models_compared": ("models compared", "%d"),
    "kind": ("kind", None),
    # sources mart
    "dataset": ("dataset", None),
    "repo": ("upstream repository", None),
    "commit": ("commit", None),
    "license": ("license", None),
    "citation": ("citation", None),
    "n_repos": ("repositories", "%d"),
    "n_files": ("files", "%d"),
    "total_bytes": ("size (bytes)", "%d"),
    "n_verified": ("sha256 verified (files)", "%d"),
    "all_verified": ("all checksums verified", None),
    "last_fetched_at": ("last fetched (UTC)", None),
    # models mart
    "dtype": ("dtype", None),
    "device": ("device", None),
    "bos_policy": ("BOS policy", None),
    "bos_token": ("BOS token", None),
    "context_length": ("context (tokens)", "%d"),
    "stride": ("stride (tokens)", "%d"),
    "top_k": ("top-k stored", "%d"),
    "finished_at": ("finished (UTC)", None),
    "started_at": ("started (UTC)", None),
    "run_limit": ("--limit (documents)", "%d"),
    "full_document": ("whole LM-game documents", None),
    "used_in_marts": ("used in marts", None),
    # warehouse tables mart
    "table_name": ("table", None),
    "layer": ("layer", None),
    "n_rows": ("rows", "%d"),
    "present": ("present", None),
    "dbt_version": ("dbt version", None),
    "duckdb_version": ("DuckDB version", None),
    "invocation_id": ("dbt invocation", None),
    "n_complete_runs": ("complete runs", "%d"),
    "n_runs_used_in_marts": ("runs used in marts", "%d"),
    "description": ("description (from dbt)", None),
    "published_at": ("published (UTC)", None),
    # source freshness (snapshot table source_freshness, dbt source freshness at build time)
    "source_table": ("source table", None),
    "freshness": ("freshness", None),
    "loaded_ago": ("last loaded", None),
    "loaded_at_field": ("loaded-at column", None),
    "max_loaded_at": ("last loaded at (UTC)", None),
    "snapshotted_at": ("checked at (UTC)", None),
    "warn_after": ("warns after", None),
    "error_after": ("errs after", None),
    # runs log (<warehouse>/runs.jsonl, one row per command run)
    "command": ("command", None),
    "run_status": ("outcome", None),
    "ended_at": ("ended (UTC)", None),
    "rows_in": ("rows in", "%d"),
    "rows_out": ("rows out", "%d"),
    "error": ("error", None),
    "arguments": ("options", None),
    "parent_run_id": ("run of the refresh / all", None),
    # word surprisal marts (paper 001: LW = leading-whitespace, WT = whitespace-trailing)
    "run_source": ("source of the run", None),
    "definitions": ("definitions available", None),
    "end_of_text_tokens": ("end-of-text tokens counted as a word boundary", None),
    "doc_id": ("passage", None),
    "word_index": ("word position in the passage", "%d"),
    "word": ("word", None),
    "n_aligned_words": ("words aligned to their tokens", "%d"),
    "n_unaligned_words": ("words not aligned", "%d"),
    "n_words_with_wt": ("words with a WT surprisal", "%d"),
    "share_multitoken": ("words of more than one token (%)", "%.1f"),
    "mean_surprisal_lw_bits": ("mean LW surprisal (bits/word)", "%.3f"),
    "mean_surprisal_wt_bits": ("mean WT surprisal (bits/word)", "%.3f"),
    "mean_wt_minus_lw_bits": ("mean WT − LW (bits/word)", "%.4f"),
    "mean_abs_wt_minus_lw_bits": ("mean |WT − LW| (bits/word)", "%.3f"),
    "share_moved_over_1_bit": ("words moved by more than 1 bit (%)", "%.1f"),
    "words_moving_most": ("the 5 words that move most (WT − LW)", None),
    "max_text_telescoping_error_nats": ("largest |WT total − LW total − final boundary| over texts (nats)",
                                        "%.1e"),
    "surprisal_lw_bits": ("LW surprisal (bits)", "%.2f"),
    "surprisal_wt_bits": ("WT surprisal (bits)", "%.2f"),
    "surprisal_wt_minus_lw_bits": ("WT − LW (bits)", "%.2f"),
    "surprisal_lw_nats": ("LW surprisal (nats)", "%.2f"),
    "surprisal_wt_nats": ("WT surprisal (nats)", "%.2f"),
    "logprob_boundary_before_nats": ("log-probability of a word boundary before the word (nats)", "%.3f"),
    "logprob_boundary_after_nats": ("log-probability of a word boundary after the word (nats)", "%.3f"),
    # humans vs models, next word (cloze marts; probabilities 0-1, WT = paper 001 eq. 6)
    "n_contexts": ("contexts", "%d"),
    "model_probability_modal_wt_mean": ("model's WT probability of people's most frequent answer (mean)", "%.3f"),
    "model_probability_modal_wt_ci_low": ("… 95% CI low", "%.3f"),
    "model_probability_modal_wt_ci_high": ("… 95% CI high", "%.3f"),
    "human_probability_modal_mean": ("people's share of their most frequent answer (mean)", "%.3f"),
    "model_top_is_human_modal_mean": ("model's favourite answer = people's (share of contexts)", "%.3f"),
    "model_probability_true_word_wt_mean": ("model's WT probability of the true word (mean)", "%.3f"),
    "human_probability_true_word_mean": ("people's cloze probability of the true word (mean)", "%.3f"),
    "human_entropy_bits_mean": ("people's entropy (bits, mean)", "%.2f"),
    "model_entropy_renormalised_bits_mean": ("model's entropy over people's answers (bits, mean)", "%.2f"),
    "spearman_rho_mean": ("Spearman's ρ, people vs model (mean)", "%.3f"),
    "spearman_rho_ci_low": ("ρ 95% CI low", "%.3f"),
    "spearman_rho_ci_high": ("ρ 95% CI high", "%.3f"),
    "kl_human_model_bits_mean": ("KL(people ‖ model) (bits, mean)", "%.2f"),
    "js_divergence_bits_mean": ("Jensen-Shannon divergence (bits, mean)", "%.3f"),
    "model_mass_on_responses_wt_mean": ("model's WT probability on people's answers (sum, mean)", "%.3f"),
    # reading times (regression marts): ours next to the published numbers
    "study": ("published study", None),
    "published_table": ("published file", None),
    "measure": ("reading measure", None),
    "predictor": ("predictor (model or norm)", None),
    "definition": ("word surprisal (lw = leading whitespace, wt = whitespace-trailing)", None),
    "statistic": ("statistic", None),
    "ours": ("ours (unit as the statistic)", "%.5f"),
    "published": ("published", "%.5f"),
    "abs_difference": ("|ours − published|", "%.2e"),
    "tolerance": ("tolerance", "%.2e"),
    "agrees": ("agrees within the tolerance", None),
    "note": ("how compared", None),
}

# readable names of the models and corpora the marts name by key (unknown keys are shown as they are)


# outcomes of dbt source freshness and of a recorded command run, in words
FRESHNESS_STATUS: dict[str, str] = {"pass": "fresh", "warn": "stale (past the warning age)",
                                    "error": "stale (past the error age)",
                                    "runtime error": "not checked (the check failed)"}
RUN_STATUS: dict[str, str] = {"ok": "finished", "error": "failed", "interrupted": "interrupted",
                              "killed": "killed (no end recorded)", "running": "running"}


def freshness_status(status) -> str:
    return FRESHNESS_STATUS.get(status, str(status))


def run_status(status) -> str:
    return RUN_STATUS.get(status, str(status))


def age(seconds) -> str:
    """A duration in words at the largest whole unit: `45 seconds`, `3 hours`, `12 days` ago."""
    if seconds is None or pd.isna(seconds):
        return "unknown"
    s = max(0, int(seconds))
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if s >= size:
            n = s // size
            return f"{n} {unit}{'' if n == 1 else 's'} ago"
    return f"{s} second{'' if s == 1 else 's'} ago"


def model_name(key: str) -> str:
    """The model's name for people, from the scoring package's model table (the key for one not in it)."""
    return model_table.display_name(key)


def model_rank(key: str) -> tuple:
    """Models in the model table's order (by family and size), then the others by name."""
    return model_table.order(key)


# (the snapshot file's identity, {corpus: title}): mart_corpora read once per published file, not per label
_TITLES: tuple[tuple, dict[str, str]] = ((), {})


def corpus_titles() -> dict[str, str]:
    """corpus -> title from the current snapshot's `mart_corpora` ({} for a snapshot from before it, or none)."""
    global _TITLES
    path = data.marts_path()
    try:
        s = os.stat(path)
    except OSError:
        return {}
    ident = (str(path), s.st_ino, s.st_mtime_ns, s.st_size)
    seen, titles = _TITLES
    if seen == ident:
        return titles
    df = data.table(CORPORA_MART)
    titles = {} if df is None or not {"corpus", "title"} <= set(df.columns) else {
        str(c): str(t) for c, t in zip(df["corpus"], df["title"]) if pd.notna(c) and pd.notna(t) and str(t).strip()}
    _TITLES = (ident, titles)
    return titles


def corpus_name(key: str) -> str:
    """The corpus's name for people: its title in the snapshot's `mart_corpora` (where a corpus added with
    `predictabase corpus add` has its title), else ingest/corpora.toml's, else the key itself. (mart_corpora titles a
    corpus without a raw.corpora row, e.g. one ingested before that job existed, with its key: not a name.)"""
    title = corpus_titles().get(str(key))
    return title if title and title != str(key) else corpus_table.title(key)


def corpus_rank(key: str) -> tuple:
    """The shipped corpora in ingest/corpora.toml's order, then every other corpus (a user's) by its name."""
    shipped = list(corpus_table.CORPORA)
    if key in shipped:
        return (0, shipped.index(key), "")
    return (1, corpus_name(key).casefold(), str(key))


def sorted_corpora(keys: Iterable) -> list:
    """The distinct corpora of `keys` (NULLs left out) in `corpus_rank`'s order."""
    return sorted({k for k in keys if k is not None and not pd.isna(k)}, key=corpus_rank)


# the metrics the perplexity page can plot: column -> axis title (with unit)
METRICS: dict[str, str] = {
    "token_perplexity": "Token perplexity (per token)",
    "bits_per_byte": "Bits per byte (bits/byte)",
    "bits_per_char": "Bits per character (bits/char)",
    "word_perplexity": "Word perplexity (per word)",
    "normalized_perplexity": "Normalized perplexity (token perplexity / vocabulary size)",
}


def visible(token) -> str:
    """A token with its whitespace made visible: ' the' -> '␣the' (a leading space is part of the token)."""
    if token is None or (isinstance(token, float) and pd.isna(token)):
        return "—"
    return str(token).replace(" ", "␣").replace("\n", "↵").replace("\t", "⇥")


def header(col: str) -> str:
    return COLUMNS.get(col, (col, None))[0]


def column_config(df: pd.DataFrame) -> dict:
    """Headers with units and number formats for the columns of `df` (unknown columns keep their names)."""
    cfg: dict = {}
    for col in df.columns:
        label, fmt = COLUMNS.get(col, (col, None))
        if col in ("commit", "model_revision", "run_id"):
            cfg[col] = st.column_config.TextColumn(label, help=f"`{col}`", width="medium")
        elif col == "repo":
            cfg[col] = st.column_config.TextColumn(label, help="GitHub owner/name")
        elif col in ("license", "citation"):  # long texts: keep the checksum columns in view
            cfg[col] = st.column_config.TextColumn(label, help=f"`{col}`", width="medium")
        elif fmt and pd.api.types.is_numeric_dtype(df[col]) and not pd.api.types.is_bool_dtype(df[col]):
            cfg[col] = st.column_config.NumberColumn(label, format=fmt, help=f"`{col}`")
        elif pd.api.types.is_bool_dtype(df[col]):
            cfg[col] = st.column_config.CheckboxColumn(label, help=f"`{col}`")
        elif pd.api.types.is_datetime64_any_dtype(df[col]):
            cfg[col] = st.column_config.DatetimeColumn(label, format="YYYY-MM-DD HH:mm:ss", help=f"`{col}`")
        else:
            cfg[col] = st.column_config.Column(label, help=f"`{col}`")
    return cfg


def in_utc(df: pd.DataFrame) -> pd.DataFrame:
    """Timestamps with a time zone shown in UTC, without the offset (the headers say UTC)."""
    out = df.copy()
    for col in out.columns:
        if isinstance(out[col].dtype, pd.DatetimeTZDtype):
            out[col] = out[col].dt.tz_convert("UTC").dt.tz_localize(None)
    return out


def timestamp(value) -> str:
    """A timestamp as `YYYY-MM-DD HH:MM:SS` in UTC."""
    ts = pd.Timestamp(value)
    if ts.tzinfo is not None:
        ts = ts.tz_convert("UTC").tz_localize(None)
    return ts.strftime("%Y-%m-%d %H:%M:%S")


def ordered(df: pd.DataFrame, first: list[str]) -> pd.DataFrame:
    """`df` with the `first` columns (those present) leading, the rest after in mart order."""
    cols = [c for c in first if c in df.columns]
    return df[cols + [c for c in df.columns if c not in cols]]


def show(df: pd.DataFrame, first: list[str] | None = None, *, title: str | None = None, **kwargs) -> None:
    """Draw `df` (the `first` columns leading) with headers in words and number formats, and under it CSV and
    LaTeX download buttons of the table as shown, titled `title` (default: the table's `key` in words)."""
    df = in_utc(ordered(df, first or []))
    data_, config = blank_nulls(df, column_config(df))
    st.dataframe(data_, hide_index=True, column_config=config, **kwargs)
    key = kwargs.get("key")
    title = title or (str(key).replace("_", " ").capitalize() if key else "Table")
    headers = {c: header(c) for c in df.columns}
    formats = {c: COLUMNS.get(c, (c, None))[1] for c in df.columns}
    collect.table(title, df, headers, formats)
    downloads.table_buttons(st, df, title, headers, formats, key, paper_columns=first or None)


def related(pages: list[tuple[str, str]], heading: str = "Related pages") -> None:
    """A page's links to the pages it relates to: (page script under dashboards/, label in words). A page run on
    its own (outside app.py's navigation, as the page tests run it) shows the labels as text."""
    st.markdown(f"**{heading}**")
    for target, label in pages:
        try:
            st.page_link(target, label=label, icon=":material/arrow_forward:")
        except st.errors.StreamlitAPIException:
            st.markdown(f"→ {label}")


def frame(df: pd.DataFrame, *, title: str, column_config: dict | None = None, column_order=None, **kwargs) -> None:
    """`st.dataframe` of a table a page configures itself (`column_config`: per column a header string, a
    (header, printf format) pair for a number column, or a st.column_config entry), with the same CSV and LaTeX
    download buttons as `show` and recorded by the collect hook: the headers and printf formats of the files are
    those of the configuration."""
    config = {col: st.column_config.NumberColumn(cfg[0], format=cfg[1]) if isinstance(cfg, tuple) else cfg
              for col, cfg in (column_config or {}).items()}
    data_, shown_config = blank_nulls(df, config)
    st.dataframe(data_, column_config=shown_config, column_order=column_order, **{"hide_index": True, **kwargs})
    shown = df[[c for c in (column_order or df.columns) if c in df.columns]]
    headers, formats = {}, {}
    for col in shown.columns:
        cfg = config.get(col)
        if isinstance(cfg, str):
            headers[col] = cfg
        elif isinstance(cfg, dict):
            headers[col] = cfg.get("label") or header(col)
            formats[col] = (cfg.get("type_config") or {}).get("format")
        else:
            headers[col], formats[col] = COLUMNS.get(col, (col, None))
    collect.table(title, shown, headers, formats)
    downloads.table_buttons(st, shown, title, headers, formats, kwargs.get("key"))


MISSING = float("-inf")  # a missing number on screen: sorts first, shown blank


def _printf(fmt: str | None):
    def render(v) -> str:
        if v == MISSING:
            return ""
        if fmt == "scientific":
            return f"{v:.3e}"
        return fmt % v if fmt else f"{v:.6g}"
    return render


def blank_nulls(df: pd.DataFrame, config: dict):
    """(data, column_config) for st.dataframe, with every missing value shown as an empty cell (Streamlit's grid
    writes "None" in a null cell): a text column's nulls become "", a number column's a -inf shown as "" by a
    pandas Styler, which also prints that column's format (the grid keeps sorting it as numbers). Other
    columns are left as they are."""
    fill, formats, config = {}, {}, dict(config)
    for col in df.columns:
        if not df[col].isna().any() or pd.api.types.is_bool_dtype(df[col]) \
                or pd.api.types.is_datetime64_any_dtype(df[col]):
            continue
        if pd.api.types.is_numeric_dtype(df[col]):
            cfg = config.get(col)
            fmt = COLUMNS.get(col, (col, None))[1]
            if isinstance(cfg, dict):
                fmt = (cfg.get("type_config") or {}).get("format") or fmt
                config[col] = {**cfg, "type_config": {**cfg["type_config"], "format": None}} \
                    if cfg.get("type_config") else cfg
            fill[col], formats[col] = MISSING, _printf(fmt)
        elif df[col].dtype == object or pd.api.types.is_string_dtype(df[col]):
            fill[col] = ""
    if not fill:
        return df, config
    shown = df.astype({c: float for c in formats}).fillna(fill)
    return (shown.style.format(formats) if formats else shown), config
