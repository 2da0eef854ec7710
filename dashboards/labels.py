"""Display labels (with units), number formats and hover help for the columns pages show. Formatting only; the
reads, through data.py, are the snapshot's descriptions of its mart columns (`snapshot_columns`: the label, format
and description each column has in dbt's YAML) and the corpora's names for people (a user's corpus has its title
in the snapshot's `mart_corpora`)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd
import streamlit as st

import data
import downloads
from predictabase import collect
from predictabase.ingest import corpus_table
from predictabase.ingest.scoring import model_table

CORPORA_MART = "mart_corpora"  # one row per corpus: corpus, title, origin ('shipped' | 'user'), ...

SNAPSHOT_COLUMNS = "snapshot_columns"  # publish's: every mart column, with dbt's description, label and format


@dataclass(frozen=True)
class Column:
    """How a page shows a column: its header (with the unit), printf number format (None: text or default) and
    the hover help (what the column holds, in words; None: no help)."""

    label: str
    format: str | None = None
    help: str | None = None


# Where a frame's columns come from when they are no mart's (the `mart` of `show` / `column_config`)
RUNS_LOG = "runs log"  # <warehouse>/runs.jsonl, one row per command run
FRESHNESS = "source freshness"  # the build's dbt source freshness check, the snapshot's `source_freshness`
NOT_MARTS = (RUNS_LOG, FRESHNESS)

# NOT MART COLUMNS ONLY. Every mart column's header, number format and help come from dbt's YAML (the column's
# `config: {meta: {label, format}}` and its description), published in the snapshot's `snapshot_columns`; only
# the columns no dbt model has live here: the runs log's, the freshness check's and the snapshot's own metadata.
OTHER_COLUMNS: dict[str, Column] = {
    # the runs log
    "command": Column("command", None, "the predictabase command that ran"),
    "run_status": Column("outcome", None, "finished, failed, interrupted, killed (no end recorded) or running"),
    "started_at": Column("started (UTC)", None, "when the command started"),
    "ended_at": Column("ended (UTC)", None, "when the command ended (empty while it runs, or when it was killed)"),
    "rows_in": Column("rows in", "%d", "the rows the command read"),
    "rows_out": Column("rows out", "%d", "the rows the command wrote"),
    "error": Column("error", None, "what went wrong, when something did"),
    "arguments": Column("options", None, "the options the command was given"),
    "run_id": Column("run", None, "the command run's own id"),
    "parent_run_id": Column("run of the refresh / all", None, "the refresh or all command this run was part of"),
    # the build's source freshness check
    "source_table": Column("source table", None, "the source and its table"),
    "freshness": Column("freshness", None, "fresh, or stale past the warning or the error age"),
    "loaded_ago": Column("last loaded", None, "how long before the check the source was last fetched"),
    "loaded_at_field": Column("loaded-at column", None, "the column that says when a row was fetched"),
    "max_loaded_at": Column("last loaded at (UTC)", None, "when the source was last fetched"),
    "snapshotted_at": Column("checked at (UTC)", None, "when the build checked"),
    "warn_after": Column("warns after", None, "the age past which the source counts as stale"),
    "error_after": Column("errs after", None, "the age past which the check fails"),
    # the names for people the pages put beside a mart's keys (a mart without them has only the key)
    "model_name": Column("model", None, "the model's name for people"),
    "corpus_title": Column("corpus", None, "the corpus's name for people"),
    # the snapshot's metadata: a mart's description, when the snapshot was published
    "description": Column("description (from dbt)", None, "what the table holds, as the dbt project describes it"),
    "published_at": Column("published (UTC)", None, "when the snapshot was published"),
}


@dataclass(frozen=True)
class _Described:
    by_mart: dict[tuple[str, str], Column]  # (mart, column) -> its label, format and description
    by_name: dict[str, Column]  # column -> the label and format dbt gives it, the description most marts give it


# (the snapshot file's identity, its columns described): snapshot_columns read once per published file
_DESCRIBED: tuple[tuple, _Described] = ((), _Described({}, {}))


def _text(value) -> str | None:
    return None if value is None or pd.isna(value) or not str(value).strip() else str(value).strip()


def described() -> _Described:
    """The current snapshot's mart columns with their label, format and description (from `snapshot_columns`;
    a snapshot from before the labels has descriptions only, one from before the descriptions nothing)."""
    global _DESCRIBED
    path = data.marts_path()
    try:
        s = os.stat(path)
    except OSError:
        return _Described({}, {})
    ident = (str(path), s.st_ino, s.st_mtime_ns, s.st_size)
    if _DESCRIBED[0] == ident:
        return _DESCRIBED[1]
    df = data.table(SNAPSHOT_COLUMNS)
    by_mart: dict[tuple[str, str], Column] = {}
    labelled: dict[str, tuple[str, str | None]] = {}
    helps: dict[str, Counter] = {}
    if df is not None and {"mart", "column_name"} <= set(df.columns):
        for row in df.sort_values(["mart", "column_name"]).to_dict("records"):
            col = str(row["column_name"])
            label, fmt, desc = (_text(row.get(k)) for k in ("label", "format", "description"))
            by_mart[(str(row["mart"]), col)] = Column(label or "", fmt, desc)
            if label:
                labelled.setdefault(col, (label, fmt))
                if fmt and not labelled[col][1]:  # a text column of the name gives no format; a number one does
                    labelled[col] = (labelled[col][0], fmt)
            if desc:
                helps.setdefault(col, Counter())[desc] += 1
    by_name = {
        col: Column(*labelled.get(col, ("", None)), helps[col].most_common(1)[0][0] if col in helps else None)
        for col in set(labelled) | set(helps)
    }
    _DESCRIBED = (ident, _Described(by_mart, by_name))
    return _DESCRIBED[1]


def column(col: str, mart: str | None = None) -> Column:
    """How to show column `col` of a frame from `mart` (a mart of the snapshot, one of NOT_MARTS, or None: any
    mart). A mart column: dbt's label and format (the same in every mart, by test), and as help that mart's
    description (with no mart named, the description most marts give the column). A column of the runs log or the
    freshness check: OTHER_COLUMNS. Any other column (or an old snapshot's): its name in words."""
    if mart in NOT_MARTS and col in OTHER_COLUMNS:
        return OTHER_COLUMNS[col]
    d = described()
    name, own = d.by_name.get(col), d.by_mart.get((mart, col)) if mart else None
    other = OTHER_COLUMNS.get(col)
    label = (name.label if name else "") or (other.label if other else "") or col.replace("_", " ")
    fmt = (name.format if name and name.label else None) or (other.format if other else None)
    help_ = (own.help if own else None) or (name.help if name else None) or (other.help if other else None)
    return Column(label, fmt, help_)


class _Headers:
    """column -> (header, number format), read from the snapshot as `column` does: `c in COLUMNS` when a page
    knows the column (dbt labels it, or it is one of OTHER_COLUMNS); any column has a header."""

    def __getitem__(self, col: str) -> tuple[str, str | None]:
        c = column(col)
        return c.label, c.format

    def __contains__(self, col) -> bool:
        return col in OTHER_COLUMNS or bool((c := described().by_name.get(col)) and c.label)


COLUMNS = _Headers()


# readable names of the models and corpora the marts name by key (unknown keys are shown as they are)


# outcomes of dbt source freshness and of a recorded command run, in words
FRESHNESS_STATUS: dict[str, str] = {
    "pass": "fresh",
    "warn": "stale (past the warning age)",
    "error": "stale (past the error age)",
    "runtime error": "not checked (the check failed)",
}
RUN_STATUS: dict[str, str] = {
    "ok": "finished",
    "error": "failed",
    "interrupted": "interrupted",
    "killed": "killed (no end recorded)",
    "running": "running",
}


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
    titles = (
        {}
        if df is None or not {"corpus", "title"} <= set(df.columns)
        else {
            str(c): str(t) for c, t in zip(df["corpus"], df["title"]) if pd.notna(c) and pd.notna(t) and str(t).strip()
        }
    )
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


# the metrics the perplexity page can plot (their axis titles: `metric_title`)
METRICS = ("token_perplexity", "bits_per_byte", "bits_per_char", "word_perplexity", "normalized_perplexity")


def metric_title(col: str) -> str:
    """A metric's axis title: its header, capitalized (`Bits per byte (bits/byte)`)."""
    label = header(col)
    return label[:1].upper() + label[1:]


def visible(token) -> str:
    """A token with its whitespace made visible: ' the' -> '␣the' (a leading space is part of the token)."""
    if token is None or (isinstance(token, float) and pd.isna(token)):
        return "—"
    return str(token).replace(" ", "␣").replace("\n", "↵").replace("\t", "⇥")


def header(col: str, mart: str | None = None) -> str:
    return column(col, mart).label


def number_format(col: str, mart: str | None = None) -> str | None:
    return column(col, mart).format


def column_config(df: pd.DataFrame, mart: str | None = None) -> dict:
    """Headers with units, number formats and hover help (what the column holds) for the columns of `df`, a frame
    of `mart` (see `column`; columns nobody describes get their names in words and no help)."""
    cfg: dict = {}
    for col in df.columns:
        c = column(col, mart)
        label, fmt, kw = c.label, c.format, {"help": c.help} if c.help else {}
        if col in ("commit", "model_revision", "run_id", "license", "citation"):  # long texts: keep the rest in view
            cfg[col] = st.column_config.TextColumn(label, width="medium", **kw)
        elif fmt and pd.api.types.is_numeric_dtype(df[col]) and not pd.api.types.is_bool_dtype(df[col]):
            cfg[col] = st.column_config.NumberColumn(label, format=fmt, **kw)
        elif pd.api.types.is_bool_dtype(df[col]):
            cfg[col] = st.column_config.CheckboxColumn(label, **kw)
        elif pd.api.types.is_datetime64_any_dtype(df[col]):
            cfg[col] = st.column_config.DatetimeColumn(label, format="YYYY-MM-DD HH:mm:ss", **kw)
        else:
            cfg[col] = st.column_config.Column(label, **kw)
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


def show(
    df: pd.DataFrame, first: list[str] | None = None, *, mart: str | None = None, title: str | None = None, **kwargs
) -> None:
    """Draw `df` (the `first` columns leading; its columns those of `mart`, see `column`) with headers in words,
    number formats and help, and under it CSV and LaTeX download buttons of the table as shown, titled `title`
    (default: the table's `key` in words)."""
    df = in_utc(ordered(df, first or []))
    config = column_config(df, mart)
    data_, shown_config = blank_nulls(df, config)
    st.dataframe(data_, hide_index=True, column_config=shown_config, **kwargs)
    key = kwargs.get("key")
    title = title or (str(key).replace("_", " ").capitalize() if key else "Table")
    headers = {c: config[c]["label"] for c in df.columns}
    formats = {c: number_format(c, mart) for c in df.columns}
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
    config = {
        col: st.column_config.NumberColumn(cfg[0], format=cfg[1]) if isinstance(cfg, tuple) else cfg
        for col, cfg in (column_config or {}).items()
    }
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
            headers[col], formats[col] = header(col), number_format(col)
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
        if (
            not df[col].isna().any()
            or pd.api.types.is_bool_dtype(df[col])
            or pd.api.types.is_datetime64_any_dtype(df[col])
        ):
            continue
        if pd.api.types.is_numeric_dtype(df[col]):
            cfg = config.get(col)
            fmt = number_format(col)
            if isinstance(cfg, dict):
                fmt = (cfg.get("type_config") or {}).get("format") or fmt
                config[col] = (
                    {**cfg, "type_config": {**cfg["type_config"], "format": None}} if cfg.get("type_config") else cfg
                )
            fill[col], formats[col] = MISSING, _printf(fmt)
        elif df[col].dtype == object or pd.api.types.is_string_dtype(df[col]):
            fill[col] = ""
    if not fill:
        return df, config
    shown = df.astype({c: float for c in formats}).fillna(fill)
    return (shown.style.format(formats) if formats else shown), config
