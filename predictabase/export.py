"""`predictabase export words`: the file researchers want, one row per word of a corpus with every model's
surprisal next to the word's length, frequency, reading-time means and cloze.

It reads `mart_words_export` of the published snapshot (one row per word and run, every value computed by dbt)
and only reshapes it: one row per word, and per model the columns `<model>__surprisal_lw_bits`,
`<model>__surprisal_lw_nats`, `<model>__surprisal_wt_bits`, `<model>__surprisal_wt_nats`,
`<model>__logprob_boundary_before_nats`, `<model>__logprob_boundary_after_nats` (<model> = the model key with
every character other than a letter or digit written `_`). Reading-time columns of measures the corpus does not
have are left out. The provenance (snapshot, corpus and its source sha256, each model's id, revision, run id
and scoring settings) is a header of `# ` lines in a CSV (R: `read.csv(f, comment.char = "#")`; pandas:
`read_csv(f, comment="#")`) and the file's key-value metadata `predictabase.provenance` (JSON) in a Parquet
file. The Word surprisal page downloads the same table (`words_csv`).

`predictabase export --out DIR` (`export_all`): every chart and table of the dashboard, as the pages draw them at
their default view (run headless with Streamlit's AppTest, recorded through the collect hook,
predictabase/collect.py), written as paper-ready files (predictabase/paper_files.py) with a manifest.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import io
import json
import logging
import os
import re
import shutil
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import polars as pl

from predictabase import citations, collect, paper_files
from predictabase.core import resources
from predictabase.core.config import is_warehouse
from predictabase.core.errors import OptionError, WarehouseError
from predictabase.core.failpoints import failpoint
from predictabase.core.fsutil import atomic_path, remove_dead_temporaries, sha256_of, temp_prefix
from predictabase.ingest.corpus_declarations import MEASURES
from predictabase.warehouse.dbt import environ

MART = "mart_words_export"
#: the word's own columns, in the file's order (those of measures the corpus lacks are dropped)
WORD_COLUMNS = [
    "corpus",
    "doc_id",
    "word_index",
    "native_word_id",
    "word",
    "length_chars",
    "zipf_frequency",
    "frequency_source",
    *(f"mean_rt_{m}_ms" for m in MEASURES),  # every declared reading measure's per-word mean
    "cloze_probability",
    "cloze_surprisal_nats",
]
OPTIONAL = {c for c in WORD_COLUMNS if c.startswith(("mean_rt_", "cloze_"))}
#: each model's columns, prefixed with the model
MODEL_COLUMNS = [
    "surprisal_lw_bits",
    "surprisal_lw_nats",
    "surprisal_wt_bits",
    "surprisal_wt_nats",
    "logprob_boundary_before_nats",
    "logprob_boundary_after_nats",
]
RUN_COLUMNS = [
    "model_key",
    "model_id",
    "model_revision",
    "run_id",
    "run_source",
    "context_length",
    "stride",
    "dtype",
    "bos_policy",
]
FORMATS = (".csv", ".parquet")
PAGE_TIMEOUT_S = 300  # `export --out`: the longest one dashboard page may take to run


def column_prefix(model_key: str) -> str:
    return re.sub(r"[^0-9A-Za-z]+", "_", model_key).strip("_")


def wide(long: pl.DataFrame, corpus_info: dict | None = None) -> tuple[pl.DataFrame, dict]:
    """One row per word (every word of the corpus that any run covers, in text order) and the provenance."""
    keys = ["doc_id", "word_index"]
    words = (
        long.select([c for c in WORD_COLUMNS if c in long.columns])
        .unique(keys, keep="first")
        .sort(pl.col("doc_id").cast(pl.Int64, strict=False), "doc_id", "word_index", nulls_last=True)
    )  # 2 < 10
    words = words.drop([c for c in OPTIONAL if c in words.columns and words[c].null_count() == words.height])
    runs = long.select(RUN_COLUMNS).unique("run_id").sort("model_key", "run_id")
    out = words
    for model_key, run_id in runs.select("model_key", "run_id").iter_rows():
        p = column_prefix(model_key)
        cols = long.filter(pl.col("run_id") == run_id).select(
            *keys, *[pl.col(c).alias(f"{p}__{c}") for c in MODEL_COLUMNS]
        )
        out = out.join(cols, on=keys, how="left")
    prov = {
        "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "corpus": corpus_info or {"corpus": long["corpus"][0] if long.height else None},
        "rows": out.height,
        "runs": runs.to_dicts(),
        "columns": "one row per word; per model <model>__surprisal_{lw,wt}_{bits,nats} (LW = leading-whitespace, "
        "WT = whitespace-trailing, Oh & Schuler 2024, eqs. 5-6) and the boundary terms ln B before/after the "
        "word (nats); mean_rt_*_ms = per-word mean reading times; cloze_surprisal_nats = -ln "
        "(smoothed) cloze probability; zipf_frequency = log10 frequency per billion words",
    }
    return out, prov


def header_lines(prov: dict) -> list[str]:
    lines = [f"predictabase export words: {prov['rows']} words, exported {prov['exported_at']}"]
    c = prov.get("corpus") or {}
    lines.append("corpus: " + ", ".join(f"{k}={v}" for k, v in c.items() if v is not None))
    if prov.get("snapshot"):
        lines.append("snapshot: " + ", ".join(f"{k}={v}" for k, v in prov["snapshot"].items() if v is not None))
    for r in prov["runs"]:
        lines.append(
            "model "
            + column_prefix(r["model_key"])
            + ": "
            + ", ".join(f"{k}={v}" for k, v in r.items() if v is not None)
        )
    lines.append(f"columns: {prov['columns']}")
    return lines


def csv_bytes(table: pl.DataFrame, prov: dict) -> bytes:
    return paper_files.comment_block(header_lines(prov)).encode() + table.write_csv().encode()


@contextlib.contextmanager
def _snapshot(path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    if not path.exists():
        raise WarehouseError(path, "no published snapshot yet; run `predictabase refresh` (or build)")
    con = duckdb.connect(":memory:")
    try:
        con.execute(f"ATTACH '{str(path).replace(chr(39), chr(39) * 2)}' AS snap (READ_ONLY)")
        con.execute("USE snap")
        yield con
    finally:
        con.close()


def read_long(con: duckdb.DuckDBPyConnection, corpus: str, models: list[str] | None) -> pl.DataFrame:
    tables = {
        r[0]
        for r in con.execute("SELECT table_name FROM information_schema.tables WHERE table_catalog = 'snap'").fetchall()
    }
    if MART not in tables:
        raise WarehouseError(MART, "not in the published snapshot; run `predictabase refresh` (or build)")
    corpora = [r[0] for r in con.execute(f"SELECT DISTINCT corpus FROM {MART} ORDER BY 1").fetchall()]
    if corpus not in corpora:
        raise OptionError("--corpus", f"{corpus!r} has no word surprisal in the snapshot; one of {', '.join(corpora)}")
    long = pl.from_arrow(con.sql(f"SELECT * FROM {MART} WHERE corpus = $1", params=[corpus]).to_arrow_table())
    if models:
        have = sorted(set(long["model_key"].to_list()))
        unknown = [m for m in models if m not in have]
        if unknown:
            raise OptionError("--models", f"{', '.join(unknown)} not scored on {corpus}; one of {', '.join(have)}")
        long = long.filter(pl.col("model_key").is_in(models))
    return long


CORPUS_PROVENANCE = (
    "corpus",
    "title",
    "origin",
    "published",
    "declared_at",
    "reading_measures",
    "frequency_source",
    "declaration_sha256",
    "source_path",
    "source_sha256",
)


def _corpus_info(con: duckdb.DuckDBPyConnection, corpus: str) -> dict:
    """The corpus's provenance from mart_corpora (title, origin, its declaration and texts file with their sha256)."""
    try:
        rows = con.sql("SELECT * FROM mart_corpora WHERE corpus = $1", params=[corpus]).to_arrow_table().to_pylist()
    except duckdb.Error:
        rows = []
    if not rows:
        return {"corpus": corpus}
    return {k: rows[0][k] for k in CORPUS_PROVENANCE if rows[0].get(k) not in (None, [])}


def _snapshot_info(con: duckdb.DuckDBPyConnection) -> dict:
    try:
        rows = con.sql("SELECT * FROM snapshot_info LIMIT 1").to_arrow_table().to_pylist()
    except duckdb.Error:
        return {}
    return {k: str(v) for k, v in rows[0].items()} if rows else {}


def export_words(marts: Path, corpus: str, models: list[str] | None, out: Path) -> dict:
    """Write the one-row-per-word table of `corpus` to `out` (.csv or .parquet) with its provenance."""
    if out.suffix.lower() not in FORMATS:
        raise OptionError("--out", f"{out}: the file name must end in {' or '.join(FORMATS)}")
    if not out.parent.is_dir():
        raise OptionError("--out", f"{out.parent}: no such directory")
    if out.is_dir():
        raise OptionError("--out", f"{out}: a directory; give a file name")
    with _snapshot(marts) as con:
        long = read_long(con, corpus, models)
        table, prov = wide(long, _corpus_info(con, corpus))
        prov["snapshot"] = _snapshot_info(con)
    remove_dead_temporaries(out.parent, out.name, out.suffix)  # what a killed export of the same file left
    with atomic_path(out, suffix=out.suffix, tag=out.name) as tmp:  # beside it, renamed over it when complete
        if out.suffix.lower() == ".csv":
            tmp.write_bytes(csv_bytes(table, prov))
        else:
            table.write_parquet(tmp, metadata={"predictabase.provenance": json.dumps(prov, default=str)})
    return {
        "corpus": corpus,
        "rows": table.height,
        "columns": table.columns,
        "out": str(out),
        "models": sorted({r["model_key"] for r in prov["runs"]}),
    }


# --------------------------------------------------------------------------- `predictabase export --out DIR`


def dashboard_pages(app: Path) -> list[dict]:
    """The `st.Page` entries of the dashboard's app.py, in order: path (relative to it), title, url_path."""
    calls = [
        n
        for n in ast.walk(ast.parse(app.read_text()))
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == "Page"
        and n.args
        and isinstance(n.args[0], ast.Constant)
    ]
    pages = []
    for call in sorted(calls, key=lambda n: (n.lineno, n.col_offset)):
        path = call.args[0].value
        kw = {k.arg: k.value.value for k in call.keywords if isinstance(k.value, ast.Constant)}
        pages.append(
            {"path": path, "title": kw.get("title", Path(path).stem), "url_path": kw.get("url_path", Path(path).stem)}
        )
    return pages


def _run_pages(app: Path, marts: Path, pages: list[dict]) -> Iterator[tuple[dict, list]]:
    """Each page run headless (Streamlit's AppTest, which runs app.py as Streamlit does, its folder first on the
    path) at its default view, with what it drew (the collect hook, predictabase/collect.py): (page, items)."""
    from streamlit.testing.v1 import AppTest

    with environ({"PREDICTABASE_WAREHOUSE": str(marts)}):  # the dashboard reads `marts`
        quiet = logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context")
        level = quiet.level
        quiet.setLevel(logging.ERROR)  # AppTest's own session state warns that it runs without a server
        try:
            at = AppTest.from_file(str(app), default_timeout=PAGE_TIMEOUT_S)
        finally:
            quiet.setLevel(level)
        at.run()  # st.navigation registers the pages on the first run
        for page in pages:
            collect.start(page["url_path"])
            try:
                at.switch_page(page["path"]).run()
            finally:
                items = collect.stop()
            if at.exception:
                raise WarehouseError(
                    f"dashboard page /{page['url_path']}", f"failed: {' '.join(at.exception[0].message.split())}"
                )
            yield page, items


def _entry(root: Path, path: Path, body: str | bytes, **fields) -> dict:
    data = body.encode() if isinstance(body, str) else body
    path.write_bytes(data)
    return {
        **fields,
        "path": path.relative_to(root).as_posix(),
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }


def _svg_size(svg: str) -> dict:
    m = re.search(r'<svg\b[^>]*?\swidth="([\d.]+)"[^>]*?\sheight="([\d.]+)"', svg)
    return {"width": round(float(m.group(1))), "height": round(float(m.group(2)))} if m else {}


def _write_item(root: Path, folder: Path, n: int, item, prov: dict) -> Iterator[dict]:
    """The files of one chart (SVG, PNG) or table (CSV, LaTeX), one at a time, as manifest entries."""
    from PIL import Image

    stem = folder / f"{n:02d}-{paper_files.slug(item.title)}"
    meta = {"page": item.page, "title": item.title}
    if hasattr(item, "chart"):
        svg = paper_files.chart_svg(item.chart, prov)
        yield _entry(root, stem.with_suffix(".svg"), svg, **meta, kind="chart", format="svg", **_svg_size(svg))
        png = paper_files.chart_png(item.chart, prov)
        with Image.open(io.BytesIO(png)) as img:
            size = {"width": img.width, "height": img.height}
        yield _entry(root, stem.with_suffix(".png"), png, **meta, kind="chart", format="png", **size)
        return
    shape = {"rows": len(item.df), "columns": len(item.df.columns)}
    yield _entry(
        root,
        stem.with_suffix(".csv"),
        paper_files.table_csv(item.df, prov, item.title, item.headers),
        **meta,
        kind="table",
        format="csv",
        **shape,
    )
    yield _entry(
        root,
        stem.with_suffix(".tex"),
        paper_files.table_latex(item.df, prov, item.title, item.formats, item.headers),
        **meta,
        kind="table",
        format="tex",
        **shape,
    )


def _references(marts: Path):
    """The snapshot's mart_references (None where it has none), for each page's references.bib."""
    with _snapshot(marts) as con:
        if (
            con.execute(
                "SELECT count(*) FROM information_schema.tables WHERE table_catalog = 'snap' AND table_name = ?",
                [citations.MART],
            ).fetchone()[0]
            == 0
        ):
            return None
        return con.execute(f"SELECT * FROM {citations.MART}").df()


def _check_out(out: Path) -> None:
    if not out.parent.is_dir():
        raise OptionError("--out", f"{out.parent}: no such directory")
    if out.is_symlink():  # the export replaces its folder by a rename: it would replace the link, not its target
        raise OptionError("--out", f"{out}: a link; name the folder it leads to")
    if out.exists() and not out.is_dir():
        raise OptionError("--out", f"{out}: not a directory")
    if out.is_dir() and any(out.iterdir()):
        problem = not_a_previous_export(out)
        if problem:
            raise OptionError(
                "--out",
                f"{out}: {problem}; nothing was changed: name a new or empty directory "
                "(an earlier export is replaced only when it holds its own files alone)",
            )


def not_a_previous_export(out: Path) -> str | None:
    """Why the folder `out` is not exactly a previous export (None when it is): an export replaces its folder
    whole, so it may only replace the files its manifest lists, each with its sha256, and their folders. A
    warehouse moved in, a file added or edited since, a link: anything else is the user's and is kept."""
    try:
        manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        listed = {f["path"]: f["sha256"] for f in manifest["files"]}
    except FileNotFoundError:
        return "not empty and not a previous export (no manifest.json)"
    except (OSError, ValueError, KeyError, TypeError):
        return "manifest.json is not an export's manifest"
    folders = {str(Path(f).parent) for f in listed} | {"."}
    folders |= {str(parent) for f in listed for parent in Path(f).parents}
    for root, dirs, files in os.walk(out):
        here = Path(root).relative_to(out)
        for d in sorted(dirs):
            rel, full = (here / d).as_posix(), Path(root) / d
            if is_warehouse(full):
                return f"holds a warehouse ({rel})"
            if full.is_symlink() or rel not in folders:
                return f"holds {rel}/, which no export wrote"
        for f in sorted(files):
            rel, full = (here / f).as_posix(), Path(root) / f
            if rel == "manifest.json":
                continue
            if full.is_symlink() or rel not in listed:
                return f"holds {rel}, which the earlier export's manifest does not list"
            if sha256_of(full) != listed[rel]:
                return f"{rel} changed since it was exported (its sha256 is not the manifest's)"
    return None


def _swap(tmp: Path, out: Path) -> None:
    """Put the finished export `tmp` in the place of `out` (a previous export, checked again now, or nothing)."""
    old = out.with_name(f"{temp_prefix(out.name + '.old')}{uuid.uuid4().hex[:8]}")
    if out.exists():
        problem = not_a_previous_export(out) if out.is_dir() and any(out.iterdir()) else None
        if problem:
            raise OptionError("--out", f"{out}: changed during the export ({problem}); nothing was replaced")
        out.rename(old)
    tmp.rename(out)
    shutil.rmtree(old, ignore_errors=True)


def _progress(show: bool):
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        disable=not show,
    )


def _export_pages(app: Path, marts: Path, root: Path, prov: dict, show_progress: bool) -> list[dict]:
    """Every page's charts and tables (and references.bib) written under `root`; their manifest entries."""
    pages, files = dashboard_pages(app), []
    refs = _references(marts)
    with _progress(show_progress) as bar:
        tasks = {p["url_path"]: bar.add_task(p["title"], total=None) for p in pages}
        for page, items in _run_pages(app, marts, pages):
            task, folder = tasks[page["url_path"]], root / page["url_path"]
            bib = citations.page_bibtex(refs, page["url_path"])
            bar.update(task, total=2 * len(items) + (1 if bib else 0))
            if items or bib:
                folder.mkdir()
            for n, item in enumerate(items, 1):
                for entry in _write_item(root, folder, n, item, prov):
                    files.append(entry)
                    bar.advance(task)
            if bib:
                files.append(
                    _entry(
                        root,
                        folder / "references.bib",
                        bib,
                        page=page["url_path"],
                        title=f"{page['title']}: references",
                        kind="references",
                        format="bib",
                    )
                )
                bar.advance(task)
            failpoint("export.page_done")
    return files


def export_all(marts: Path, out: Path, show_progress: bool = False) -> dict:
    """Every chart (SVG, PNG) and table (CSV, LaTeX) of every dashboard page at its default view, read from the
    published snapshot `marts`, into `out`/<page>/, with provenance.json and manifest.json. Written into a
    temporary sibling and swapped in at the end: a failed export leaves `out` as it was."""
    _check_out(out)
    if not marts.exists():
        raise WarehouseError(marts, "no published snapshot yet; run `predictabase refresh` (or build)")
    started, clock = datetime.now(UTC), time.monotonic()
    prov = paper_files.provenance(marts)
    snapshot_id = (prov.get("snapshot") or {}).get("snapshot_id")
    for name in (f"{out.name}.export", f"{out.name}.old"):  # what a killed export left beside `out`
        remove_dead_temporaries(out.parent, name)
    tmp = out.with_name(f"{temp_prefix(out.name + '.export')}{uuid.uuid4().hex[:8]}")
    tmp.mkdir()
    try:
        files = _export_pages(resources.dashboard_app(), marts, tmp, prov, show_progress)
        if (paper_files.provenance(marts).get("snapshot") or {}).get("snapshot_id") != snapshot_id:
            raise WarehouseError(marts, "a new snapshot was published during the export; run it again")
        files.append(
            _entry(
                tmp,
                tmp / "provenance.json",
                json.dumps(prov, indent=2, sort_keys=True) + "\n",
                page=None,
                title="provenance",
                kind="provenance",
                format="json",
            )
        )
        manifest = {
            "snapshot_id": snapshot_id,
            "provenance": paper_files.provenance_line(prov),
            "started_at": started.isoformat(timespec="seconds"),
            "ended_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "files": files,
        }
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        _swap(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return {
        "out": str(out),
        "files": len(files) + 1,
        "seconds": round(time.monotonic() - clock, 1),
        "snapshot_id": snapshot_id,
        "charts": sum(f["format"] == "svg" for f in files),
        "tables": sum(f["format"] == "csv" for f in files),
    }
