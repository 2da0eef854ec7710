"""`predictabase corpus add | list | show | remove`: a researcher's own corpus, declared as data.

`add` reads and validates every file first (`predictabase.ingest.datasets.user_corpus`: every reading time, cloze
norm and frequency must join a word of the texts; one-line errors naming the file, line and column), and writes nothing
on error. Then, under the writer lock, it copies the files under `<warehouse>/raw/user/NAME/` (a temporary
folder renamed into place) and declares them with their sha256 in `<warehouse>/corpora.toml` (written by a
rename). The next `predictabase refresh` ingests the corpus, scores it with every model of models.toml and
builds its word surprisal, delta log-likelihood and PNC. `remove` deletes the declaration, the copies and the
corpus's scoring runs; the next refresh deletes its raw rows and rebuilds the marts without it.
"""

from __future__ import annotations

import contextlib
import shutil
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from predictabase.core.config import Paths
from predictabase.core.errors import OptionError
from predictabase.core.failpoints import failpoint
from predictabase.ingest import corpus_table
from predictabase.ingest.corpus_declarations import (
    MEASURES,
    NAME_RE,
    PUBLISHED,
    UNITS,
    USER_DIR,
    Declaration,
    DeclaredFile,
    load_declarations,
    save_declarations,
)


def check_name(name: str, decls: dict[str, Declaration], replacing: bool) -> None:
    if name in corpus_table.CORPORA:
        raise OptionError(
            "NAME", f"{name!r} clashes with a shipped corpus ({', '.join(corpus_table.CORPORA)}); choose another name"
        )
    if not NAME_RE.fullmatch(name):
        raise OptionError(
            "NAME",
            f"{name!r} is not a corpus name: lowercase letters, digits and _, starting with a "
            "letter, at most 40 characters",
        )
    if name in decls and not replacing:
        raise OptionError("NAME", f"corpus {name!r} exists; `--replace` replaces its files, `corpus remove` removes it")


def _pair_measures(reading_times: list[Path], measures: list[str]) -> list[tuple[Path, tuple[str, ...]]]:
    for m in measures:
        if m not in MEASURES:
            raise OptionError("--measure", f"unknown measure {m!r}; one of {', '.join(MEASURES)}")
    if reading_times and not measures:
        raise OptionError("--measure", f"required with --reading-times: one of {', '.join(MEASURES)}")
    if measures and not reading_times:
        raise OptionError("--measure", "given without --reading-times")
    if len(reading_times) == 1:
        return [(reading_times[0], tuple(dict.fromkeys(measures)))]
    if len(measures) != len(reading_times):
        raise OptionError(
            "--measure",
            f"{len(reading_times)} --reading-times files need one --measure each, in the "
            f"same order (or one file holding every measure); got {len(measures)}",
        )
    return [(f, (m,)) for f, m in zip(reading_times, measures)]


def _suffix(p: Path) -> str:
    return "" if p.is_dir() else p.suffix.lower()


def _copy(src: Path, tmp: Path, base: str, role: str, sha: str) -> DeclaredFile:
    target = f"{role}{_suffix(src)}"
    (shutil.copytree if src.is_dir() else shutil.copyfile)(src, tmp / target)
    return DeclaredFile(path=f"{base}/{target}", sha256=sha, original=str(src.resolve()))


def add(
    paths: Paths,
    name: str,
    texts: Path,
    reading_times: list[Path],
    measures: list[str],
    units: str,
    cloze: Path | None,
    frequencies: Path | None,
    encoding: str,
    title: str | None,
    published: str | None,
    replacing: bool,
    language: str = "en",
) -> dict:
    """Validate every file, then copy and declare them (see the module docstring). Returns what was added."""
    import codecs

    from predictabase.ingest.datasets.user_corpus import parse_corpus, sha256_path

    decls = load_declarations(paths)
    check_name(name, decls, replacing)
    if units not in UNITS:
        raise OptionError("--units", f"{units!r} is not allowed; one of {', '.join(UNITS)}")
    try:
        encoding = codecs.lookup(encoding).name
    except LookupError:
        raise OptionError("--encoding", f"unknown encoding {encoding!r} (e.g. utf-8, latin-1, cp1252)") from None
    if published is not None:
        if published not in PUBLISHED:
            raise OptionError("--published", f"{published!r} is not allowed; one of {', '.join(PUBLISHED)}")
        other = next((n for n, d in decls.items() if d.published == published and n != name), None)
        if other:
            raise OptionError("--published", f"{published} is already linked to corpus {other!r}")
    check_language(language)
    pairs = _pair_measures(reading_times, measures)
    for opt, f in (
        [("--texts", texts)]
        + [("--reading-times", f) for f, _ in pairs]
        + [(o, f) for o, f in (("--cloze", cloze), ("--frequencies", frequencies)) if f is not None]
    ):
        if not f.exists():
            raise OptionError(opt, f"{f}: no such file")
    # 1. read and validate everything, under the names the user gave (nothing is written yet)
    files = {"texts": (texts, str(texts), sha256_path(texts))}
    for role, f in (("cloze", cloze), ("frequencies", frequencies)):
        if f is not None:
            files[role] = (f, str(f), sha256_path(f))
    reading = [(f, str(f), sha256_path(f), ms, units) for f, ms in pairs]
    parsed = parse_corpus(name, encoding, files, reading)
    # 2. copy under raw/user/NAME/ (a temporary folder renamed into place), then declare
    base = f"{USER_DIR}/{name}"
    dest = paths.raw / base
    tmp = paths.raw / USER_DIR / f".{name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:  # a full disk or Ctrl-C while copying leaves no half-copied folder behind
        declared: dict[str, DeclaredFile] = {}
        for role, (src, _name, sha) in files.items():
            declared[role] = _copy(src, tmp, base, role, sha)
        rts = [
            replace(_copy(src, tmp, base, f"reading_times_{i}", sha), measures=ms, units=units)
            for i, (src, _name, sha, ms, _u) in enumerate(reading, 1)
        ]
        failpoint("corpus.copied")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = paths.raw / USER_DIR / f".{name}.old"
    shutil.rmtree(old, ignore_errors=True)
    if dest.exists():
        dest.rename(old)
    tmp.rename(dest)
    d = Declaration(
        name=name,
        title=title or (decls[name].title if name in decls else name.replace("_", " ").title()),
        texts=declared["texts"],
        encoding=encoding,
        added_at=datetime.now(UTC).isoformat(timespec="seconds"),
        reading_times=tuple(rts),
        cloze=declared.get("cloze"),
        frequencies=declared.get("frequencies"),
        published=published,
        language=language,
    )
    save_declarations(paths, {**decls, name: d})
    shutil.rmtree(old, ignore_errors=True)
    return {
        "corpus": name,
        "title": d.title,
        "language": d.language,
        "texts": parsed.texts.docs.height,
        "words": parsed.texts.words.height,
        "layout": parsed.texts.layout,
        "measures": list(d.measures),
        "reading_time_rows": sum(df.height for df in parsed.reading_times),
        "cloze_rows": parsed.cloze.height if parsed.cloze is not None else 0,
        "frequency_rows": parsed.frequencies.height if parsed.frequencies is not None else 0,
        "published": published,
        "declared_in": str(paths.warehouse / "corpora.toml"),
    }


def remove(paths: Paths, name: str) -> dict:
    """Delete the declaration, the copied files and the corpus's scoring runs (the next refresh deletes its raw
    rows and rebuilds the marts without it)."""
    decls = load_declarations(paths)
    if name in corpus_table.CORPORA:
        raise OptionError("NAME", f"{name!r} is a shipped corpus; only corpora added with `corpus add` can be removed")
    if name not in decls:
        raise OptionError("NAME", f"no user corpus {name!r}; `predictabase corpus list` lists them")
    runs = sorted(paths.token_scores.glob(f"model=*/corpus={name}"))
    save_declarations(paths, {k: v for k, v in decls.items() if k != name})
    for r in runs:
        shutil.rmtree(r)
    shutil.rmtree(paths.raw / USER_DIR / name, ignore_errors=True)
    with contextlib.suppress(OSError):  # the last user corpus: raw/ is the fetched tree again
        (paths.raw / USER_DIR).rmdir()
    return {"corpus": name, "removed_scoring_runs": len(runs)}


def check_language(language: str) -> None:
    """`--language`: a language wordfreq has a word list for, whose tokenizer runs here (Japanese, Chinese and
    Korean need wordfreq's optional tokenizers: `pip install wordfreq[cjk]`)."""
    import wordfreq

    known = sorted(wordfreq.available_languages("best"))
    if language not in known:
        raise OptionError(
            "--language",
            f"{language!r} is not allowed; an ISO 639-1 code wordfreq has a word list for: {', '.join(known)}",
        )
    try:
        wordfreq.lossy_tokenize("a", language)
    except ImportError as exc:
        raise OptionError(
            "--language",
            f"{language}: wordfreq's tokenizer for it is not installed ({exc}); pip install 'wordfreq[cjk]'",
        ) from None


def listing(paths: Paths) -> list[dict]:
    """Every corpus of the warehouse: the shipped ones and the user's, with what each has."""
    from predictabase.ingest.corpus_declarations import shipped_measures

    counts = _ingested_counts(paths)
    out = [
        {
            "corpus": c.key,
            "title": c.title,
            "origin": "shipped",
            "language": c.language,
            "measures": shipped_measures(c),
            "cloze": c.cloze,
            "frequencies": "wordfreq",
            **counts.get(c.key, {"texts": None, "words": None}),
        }
        for c in corpus_table.CORPORA.values()
    ]
    for d in load_declarations(paths).values():
        out.append(
            {
                "corpus": d.name,
                "title": d.title,
                "origin": "user",
                "language": d.language,
                "measures": list(d.measures),
                "cloze": d.cloze is not None,
                "frequencies": "user" if d.frequencies else "wordfreq",
                **counts.get(d.name, {"texts": None, "words": None}),
            }
        )
    return out


def show(paths: Paths, name: str) -> dict:
    decls = load_declarations(paths)
    if name not in decls:
        if name in corpus_table.CORPORA:
            return next(r for r in listing(paths) if r["corpus"] == name)
        raise OptionError("NAME", f"no corpus {name!r}; `predictabase corpus list` lists them")
    d = decls[name]
    row = next(r for r in listing(paths) if r["corpus"] == name)
    row.update(
        encoding=d.encoding,
        added_at=d.added_at,
        published=d.published,
        declaration_sha256=d.digest(),
        files=[
            {
                "role": role,
                "path": f"raw/{f.path}",
                "sha256": f.sha256,
                "original": f.original,
                **({"measures": list(f.measures), "units": f.units} if f.measures else {}),
            }
            for role, f in d.files()
        ],
    )
    return row


def _ingested_counts(paths: Paths) -> dict[str, dict]:
    """corpus -> texts and words in raw (None before the first ingest)."""
    if not paths.duckdb.exists():
        return {}
    import duckdb

    try:
        with duckdb.connect(str(paths.duckdb), read_only=True) as con:
            rows = con.execute("SELECT corpus, count(DISTINCT doc_id), count(*) FROM raw.words GROUP BY 1").fetchall()
    except duckdb.Error:
        return {}
    return {c: {"texts": t, "words": w} for c, t, w in rows}
