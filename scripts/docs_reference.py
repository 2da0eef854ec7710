"""The documentation site's reference pages, generated from the code and the project's files, never kept by hand.

    cli_reference()        every command and subcommand of `predictabase` (the Typer app walked through its click
                           commands): options with their help, type, default, environment variable and bounds, and
                           the exit codes of the app's epilog
    marts_reference()      every mart of dbt_project/models/marts with its description and columns (name, type,
                           description, the reader's label `config.meta.label`), from the dbt YAML
    config_reference()     models.toml and ingest/corpora.toml: their keys (the files' own header comments) and what
                           the shipped files declare; a user corpus's declaration
                           (predictabase.ingest.corpus_declarations)
    environment_reference()  every PREDICTABASE_* environment variable the code reads, where, and what it does
    references_bib()       docs/references.bib: every entry of ingest/sources/references.toml, the same BibTeX the
                           dashboard's "How to cite" and `predictabase export` give
    references_page()      the same references in words, grouped by kind

scripts/docs_hooks.py (the MkDocs hooks of mkdocs.yml) adds them to the site as pages when it builds;
`python scripts/docs_reference.py DIR` writes them to DIR for a look without MkDocs.
"""

from __future__ import annotations

import re
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MARTS_DIR = ROOT / "dbt_project" / "models" / "marts"
DBT_PROJECT = ROOT / "dbt_project"
#: the code read for environment variables: the CLI's packages and the dashboard
CODE_DIRS = ("predictabase", "ingest", "dashboards")
#: environment variables the code sets for its own subprocesses (dbt, the dashboard) and reads there: not a user's
#: setting, listed apart
ENV_SET_FOR_SUBPROCESSES = ("predictabase/warehouse/dbt.py",)

GENERATED_NOTE = (
    '!!! note "Generated"\n    This page is generated from {source} each time the site is built '
    "(`make docs`); edit the source, not the page.\n"
)


def _md(text: object) -> str:
    """`text` as one Markdown table cell: one line, pipes escaped, `<` outside code spans escaped (a help text's
    `<warehouse>` is not an HTML tag)."""
    if text in (None, ""):
        return ""
    parts = " ".join(str(text).split()).replace("|", "\\|").split("`")
    return "`".join(p if i % 2 else p.replace("<", "&lt;") for i, p in enumerate(parts))


def _text(text: str) -> str:
    """Paragraphs of help text as Markdown: `<` outside code spans escaped, click's \\b markers dropped."""
    parts = text.strip().replace("\b\n", "\n").split("`")
    return "`".join(p if i % 2 else p.replace("<", "&lt;") for i, p in enumerate(parts))


def _code(text: str) -> str:
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _slug(text: str) -> str:
    """The anchor MkDocs' toc extension gives a heading made only of `text` (lower case, spaces to dashes)."""
    return re.sub(r"[^\w\- ]", "", text).strip().lower().replace(" ", "-")


# ------------------------------------------------------------------------------------------------------------ CLI


def _cli_command():
    import typer

    from predictabase.cli import app

    return typer.main.get_command(app)


def walk_commands(command=None, path: tuple[str, ...] = ("predictabase",)) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(path, command) for the app and every command and subcommand under it, depth first in the app's order;
    hidden commands left out (their --help does not list them either)."""
    command = command if command is not None else _cli_command()
    yield path, command
    for name, sub in (getattr(command, "commands", None) or {}).items():
        if not getattr(sub, "hidden", False):
            yield from walk_commands(sub, (*path, name))


def command_names() -> list[str]:
    """Every command's full name ("predictabase corpus add"), the app first."""
    return [" ".join(path) for path, _ in walk_commands()]


def _context(command, path: tuple[str, ...]):
    return command.context_class(command, info_name=path[-1])


def _default(param, ctx) -> str:
    if getattr(param, "is_flag", False) and getattr(param, "secondary_opts", None):
        on, off = param.opts[0], param.secondary_opts[0]
        return on if param.default else off
    default = param.default
    if callable(default) or default is None or (getattr(param, "is_flag", False) and default is False):
        return ""
    if isinstance(default, (list, tuple)):
        return ", ".join(str(d) for d in default)
    if isinstance(default, Path):
        return str(default)
    return repr(default) if isinstance(default, str) else str(default)


def _bounds(param) -> str:
    low, high = getattr(param, "min", None), getattr(param, "max", None)
    if low is None and high is None:
        return ""
    return f"{'' if low is None else low} to {'' if high is None else high}".strip()


def _type(param, ctx) -> str:
    if getattr(param, "is_flag", False):
        return "flag"
    try:
        shown = param.display_type_rich(ctx) if hasattr(param, "display_type_rich") else param.type.name
    except (AttributeError, TypeError, ValueError):  # a type typer cannot describe: left out, the build goes on
        shown = ""
    return str(shown or "").strip("<>").replace("|", " \\| ")


def _options_table(command, ctx) -> list[str]:
    rows = []
    for p in command.params:
        if getattr(p, "hidden", False):
            continue
        name = ", ".join(_code(o) for o in [*p.opts, *getattr(p, "secondary_opts", [])])
        if p.param_type_name == "argument":
            name = _code(p.name.upper()) + (" (argument)" if p.required else " (argument, optional)")
        envvar = p.envvar if isinstance(p.envvar, str) else ", ".join(p.envvar or [])
        help_text = getattr(p, "help", None) or ""
        if p.param_type_name == "option" and p.required:
            help_text = f"**required.** {help_text}"
        rows.append(
            f"| {name} | {_md(_type(p, ctx))} | {_md(help_text)} | {_md(_default(p, ctx)) and _code(_default(p, ctx))} "
            f"| {_code(envvar) if envvar else ''} | {_md(_bounds(p))} |"
        )
    if not rows:
        return []
    return [
        "| option | type | what it does | default | environment variable | bounds |",
        "|---|---|---|---|---|---|",
        *rows,
    ]


def exit_codes() -> dict[int, str]:
    from predictabase.core.errors import EXIT_CODES

    return dict(EXIT_CODES)


def cli_reference() -> str:
    """The CLI reference page (Markdown)."""
    root = _cli_command()
    commands = list(walk_commands(root))
    out = [
        "# Command line",
        "",
        GENERATED_NOTE.format(source="the Typer app `predictabase.cli:app`"),
        "",
        _md(root.help),
        "",
        (
            "Every command below, with each option's help, type, default, environment variable and bounds, is what "
            "`predictabase COMMAND --help` shows. An option's environment variable is read when the option is not "
            "given. Bounds that the command checks itself are in the option's help."
        ),
        "",
        "## Commands",
        "",
        "| command | what it does |",
        "|---|---|",
    ]
    for path, cmd in commands[1:]:
        name = " ".join(path)
        summary = (cmd.help or "").strip().split("\n\n")[0]  # the first paragraph, whole (click's short help cuts
        # at the first full stop, "et al." included)
        out.append(f"| [{_code(name)}](#{_slug(name)}) | {_md(summary)} |")
    out += [
        "",
        "## Exit codes",
        "",
        _md(root.epilog or ""),
        "",
        "| code | meaning |",
        "|---|---|",
        *[f"| {code} | {_md(what)} |" for code, what in exit_codes().items()],
        "",
    ]
    for path, cmd in commands:
        name = " ".join(path)
        ctx = _context(cmd, path)
        level = "##" if len(path) <= 2 else "###"
        pieces = " ".join(cmd.collect_usage_pieces(ctx)) if hasattr(cmd, "collect_usage_pieces") else "[OPTIONS]"
        out += [f"{level} {name}", "", "```", f"{name} {pieces}".rstrip(), "```", ""]
        if cmd.help:
            out += [_text(cmd.help), ""]
        table = _options_table(cmd, ctx)
        if table:
            out += [*table, ""]
        subs = [n for n, s in (getattr(cmd, "commands", None) or {}).items() if not getattr(s, "hidden", False)]
        if subs:
            out += [
                "Subcommands: " + ", ".join(f"[{_code(name + ' ' + s)}](#{_slug(name + ' ' + s)})" for s in subs) + ".",
                "",
            ]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------------------- marts


def _doc_blocks() -> dict[str, str]:
    """dbt's `{% docs name %}...{% enddocs %}` blocks of the project."""
    blocks: dict[str, str] = {}
    for md in sorted((DBT_PROJECT / "models").rglob("*.md")):
        for name, body in re.findall(
            r"\{%-?\s*docs\s+(\w+)\s*-?%\}(.*?)\{%-?\s*enddocs\s*-?%\}", md.read_text(encoding="utf-8"), re.DOTALL
        ):
            blocks[name] = body.strip()
    return blocks


def _dbt_vars() -> dict[str, Any]:
    import yaml

    return (yaml.safe_load((DBT_PROJECT / "dbt_project.yml").read_text(encoding="utf-8")) or {}).get("vars") or {}


def _renderer():
    """Renders the Jinja of a dbt description: doc() blocks and var() values as the project sets them."""
    import jinja2

    blocks, variables = _doc_blocks(), _dbt_vars()
    env = jinja2.Environment(undefined=jinja2.ChainableUndefined)

    def doc(name: str) -> str:
        return blocks.get(name, name)

    def var(name: str, default: Any = None) -> Any:
        return variables.get(name, default if default is not None else name)

    def render(text: str | None) -> str:
        if not text:
            return ""
        if "{{" not in text and "{%" not in text:
            return text
        return env.from_string(text).render(doc=doc, var=var)

    return render


def marts() -> list[dict[str, Any]]:
    """Every model of the marts folder as dbt's YAML documents it, sorted by domain then name: name, domain, file,
    description and columns (name, data_type, description, label), descriptions rendered."""
    import yaml

    render = _renderer()
    out = []
    for yml in sorted(MARTS_DIR.rglob("_*.yml")):
        for model in (yaml.safe_load(yml.read_text(encoding="utf-8")) or {}).get("models") or []:
            columns = []
            for c in model.get("columns") or []:
                meta = {**(c.get("meta") or {}), **((c.get("config") or {}).get("meta") or {})}
                columns.append(
                    {
                        "name": c["name"],
                        "data_type": c.get("data_type") or "",
                        "description": render(c.get("description")),
                        "label": meta.get("label") or "",
                    }
                )
            out.append(
                {
                    "name": model["name"],
                    "domain": yml.parent.name,
                    "file": yml.relative_to(ROOT).as_posix(),
                    "description": render(model.get("description")),
                    "columns": columns,
                }
            )
    return sorted(out, key=lambda m: (m["domain"], m["name"]))


_SENTENCE_END = re.compile(r"(?<!\bal)(?<!\beq)(?<!\beqs)(?<!\bsec)(?<!\bFig)(?<!\be\.g)(?<!\bi\.e)\.\s+(?=[A-Z(])")


def _first_sentence(text: str) -> str:
    """The first sentence of a description ("et al.", "eq.", "sec.", "Fig." do not end one)."""
    flat = " ".join(text.split())
    m = _SENTENCE_END.search(flat)
    return (flat[: m.start()] if m else flat).rstrip(".") + "."


def mart_files() -> set[str]:
    """The names of the marts as models on disk (a .sql or .py file under the marts folder)."""
    return {p.stem for p in MARTS_DIR.rglob("*") if p.suffix in (".sql", ".py")}


def marts_reference(dbt_docs_link: str | None = None) -> str:
    """The marts reference page (Markdown); `dbt_docs_link`: where the site holds a warehouse's dbt docs, if it does."""
    models = marts()
    out = [
        "# Marts",
        "",
        GENERATED_NOTE.format(source="the dbt project's YAML (`dbt_project/models/marts/*/_*.yml`)"),
        "",
        (
            "The published snapshot (`<warehouse>/marts.duckdb`, schema `main`; also `marts.*` in "
            "`predictabase.duckdb`) holds one table per mart below. Read them with `predictabase sql`, DuckDB, or the "
            "dashboard's SQL page. The *label* is the column's name for readers: the dashboard's table headers and "
            "hover help use it."
        ),
        "",
    ]
    if dbt_docs_link:
        out += [
            (
                f"dbt's own documentation site of the warehouse this site was built from, with the lineage graph of "
                f"every model (staging, intermediate, marts) and its SQL: [dbt docs]({dbt_docs_link})."
            ),
            "",
        ]
    else:
        out += [
            (
                "dbt's own documentation site, with the lineage graph of every model and its SQL, is published beside "
                "every built snapshot as `<warehouse>/dbt_docs.html` (`predictabase build`; `--no-docs` skips it); "
                "build this site with `DOCS_WAREHOUSE=<warehouse> make docs` to include it here."
            ),
            "",
        ]
    out += ["| mart | domain | columns | what it holds |", "|---|---|---|---|"]
    for m in models:
        out.append(
            f"| [{_code(m['name'])}](#{m['name']}) | {m['domain']} | {len(m['columns'])} | "
            f"{_md(_first_sentence(m['description']))} |"
        )
    domain = None
    for m in models:
        if m["domain"] != domain:
            domain = m["domain"]
            out += ["", f"## {domain}", ""]
        out += [f"### {m['name']}", "", _text(" ".join(m["description"].split())), "", f"Defined in `{m['file']}`.", ""]
        if m["columns"]:
            out += ["| column | type | label | description |", "|---|---|---|---|"]
            out += [
                f"| {_code(c['name'])} | {_md(c['data_type'])} | {_md(c['label'])} | {_md(c['description'])} |"
                for c in m["columns"]
            ]
            out.append("")
    return "\n".join(out)


# ------------------------------------------------------------------------------------------------- configuration


def _header_comment(path: Path) -> str:
    """The comment block at the top of a TOML file, without the `#`s."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            if lines:
                break
            continue
        lines.append(line[1:][1:] if line.startswith("# ") else line[1:])
    return "\n".join(lines).strip("\n")


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return ", ".join(_value(x) for x in v) if v else "(none)"
    if isinstance(v, dict):
        return "; ".join(f"{k} = {_value(x)}" for k, x in v.items())
    return str(v)


def config_reference() -> str:
    """The configuration files page (Markdown)."""
    from predictabase.ingest import corpus_declarations
    from predictabase.models_config import KEYS, ModelEntry, load_models_config

    models_toml, corpora_toml = ROOT / "models.toml", ROOT / "ingest" / "corpora.toml"
    out = [
        "# Configuration files",
        "",
        GENERATED_NOTE.format(source="`models.toml`, `ingest/corpora.toml` and `ingest/corpus_declarations.py`"),
        "",
        "## models.toml: the models to keep scored",
        "",
        (
            "`predictabase refresh` scores every model listed here on its corpora, and only what is not scored yet. The "
            "file read is `--models FILE`, else `$PREDICTABASE_MODELS`, else the `models.toml` shipped with predictabase."
        ),
        "",
        "The file's own description:",
        "",
        "```text",
        _header_comment(models_toml),
        "```",
        "",
        "Keys of a `[[model]]` entry (anything else is refused):",
        "",
        "| key | default |",
        "|---|---|",
    ]
    defaults = ModelEntry(name="")
    for key in sorted(KEYS):
        d = getattr(defaults, key, None)
        shown = (
            "required"
            if key == "name"
            else ("every scored corpus" if key == "corpora" else ("(model's own)" if d is None else _value(d)))
        )
        out.append(f"| `{key}` | {_md(shown)} |")
    out += [
        "",
        "What the shipped file declares:",
        "",
        "| model | corpora | top-1 game | cloze | other settings |",
        "|---|---|---|---|---|",
    ]
    for m in load_models_config(models_toml):
        other = {k: getattr(m, k) for k in ("context_length", "stride", "dtype", "device") if getattr(m, k) is not None}
        if m.top_k != 10:
            other["top_k"] = m.top_k
        out.append(
            f"| `{m.name}` | {_md(', '.join(m.corpora))} | {_value(m.top1)} | {_value(m.cloze)} | "
            f"{_md(_value(other)) if other else ''} |"
        )

    data = tomllib.loads(corpora_toml.read_text(encoding="utf-8"))
    keys = [
        "title",
        "language",
        "texts",
        "reading",
        "cloze",
        "cloze_norms",
        "game",
        "measures",
        "collection",
        "featured",
    ]
    out += [
        "",
        "## ingest/corpora.toml: the shipped corpora",
        "",
        (
            "Every corpus the warehouse ships is declared once here; the CLI's `--corpus` choices, models.toml's "
            "`corpora`, the scoring steps, the Dagster partitions and the dashboard's corpus names derive from it."
        ),
        "",
        "The file's own description of the keys:",
        "",
        "```text",
        _header_comment(corpora_toml),
        "```",
        "",
        "What it declares:",
        "",
        "| corpus | " + " | ".join(keys) + " | exclusions |",
        "|---|" + "---|" * (len(keys) + 1),
    ]
    for name, c in data.items():
        excl = c.get("exclusions") or {}
        out.append(
            f"| `{name}` | "
            + " | ".join(_md(_value(c[k])) if k in c else "" for k in keys)
            + f" | {_md('; '.join(f'{kind}: {_value(v)}' for kind, v in excl.items()))} |"
        )
    doc = (corpus_declarations.__doc__ or "").strip()
    out += [
        "",
        "## <warehouse>/corpora.toml: a user's corpora",
        "",
        (
            "`predictabase corpus add` declares a researcher's own corpus in the warehouse's own `corpora.toml`, "
            "beside the shipped ones. From `ingest/corpus_declarations.py`:"
        ),
        "",
        "```text",
        doc,
        "```",
        "",
    ]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------------- environment

_VAR = re.compile(r"PREDICTABASE_[A-Z0-9_]+")


def _read_in_code() -> dict[str, list[tuple[str, int, str]]]:
    """Every PREDICTABASE_* name in the code: name -> [(file, line, the line's text)]."""
    found: dict[str, list[tuple[str, int, str]]] = {}
    for folder in CODE_DIRS:
        for py in sorted((ROOT / folder).rglob("*.py")):
            rel = py.relative_to(ROOT).as_posix()
            for n, line in enumerate(py.read_text(encoding="utf-8").splitlines(), 1):
                for name in _VAR.findall(line):
                    found.setdefault(name, []).append((rel, n, line.strip()))
    return found


def _prose(path: Path) -> list[str]:
    """The words of a Python file: its docstrings, comment blocks (consecutive comment lines joined) and other
    string constants, docstrings and comments first."""
    import ast
    import io
    import tokenize

    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    docs = [
        ast.get_docstring(n) or ""
        for n in ast.walk(tree)
        if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ]
    comments, block, last = [], [], -2
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            if tok.start[0] != last + 1 and block:
                comments.append(" ".join(block))
                block = []
            block.append(tok.string.lstrip("#").strip())
            last = tok.start[0]
    if block:
        comments.append(" ".join(block))
    strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return [*docs, *comments, *strings]


def _sentence(texts: list[str], name: str) -> str:
    """The first sentence of `texts` that names `name`, in one line."""
    for t in texts:
        flat = " ".join(t.split())
        if name not in flat or flat.strip("$`'\"") == name:
            continue
        for sentence in re.split(r"(?<=[.])\s+(?=[A-Z`$(])", flat):
            if name in sentence:
                return sentence.strip()
    return ""


def _config_docstring() -> dict[str, str]:
    """predictabase.core.config's table of its variables: name -> description (continuation lines joined)."""
    from predictabase.core import config

    out: dict[str, str] = {}
    last = None
    for line in (config.__doc__ or "").splitlines():
        m = re.match(r"(PREDICTABASE_[A-Z0-9_]+)\s+(.*)", line)
        if m:
            last = m.group(1)
            out[last] = m.group(2).strip()
        elif last and line.startswith(" ") and line.strip():
            out[last] += " " + line.strip()
        else:
            last = None
    return out


def environment_variables() -> dict[str, dict[str, Any]]:
    """name -> {options: [command options it stands for], help, where: [(file, line)], internal: bool}; internal:
    set by predictabase for the dbt subprocesses it starts and read by no Python code of its own."""
    uses = _read_in_code()
    options: dict[str, list[str]] = {}
    helps: dict[str, str] = {}
    for path, cmd in walk_commands():
        for p in cmd.params:
            env = p.envvar if isinstance(p.envvar, str) else None
            if env:
                options.setdefault(env, []).append(f"{' '.join(path[1:]) or 'predictabase'} {p.opts[0]}")
                helps.setdefault(env, getattr(p, "help", "") or "")
    documented = _config_docstring()
    prose: dict[str, list[str]] = {}
    out: dict[str, dict[str, Any]] = {}
    for name in sorted(set(uses) | set(options)):
        where = [(f, n) for f, n, _ in uses.get(name, [])]
        read_here = any(
            ("environ" in t or "getenv" in t) and f not in ENV_SET_FOR_SUBPROCESSES for f, _, t in uses.get(name, [])
        )
        set_for_dbt = any(f in ENV_SET_FOR_SUBPROCESSES for f, _ in where)
        internal = set_for_dbt and not read_here and name not in options
        text = helps.get(name) or documented.get(name) or ""
        if not text:
            for f in dict.fromkeys(f for f, _ in where):
                if f not in prose:
                    prose[f] = _prose(ROOT / f)
                text = _sentence(prose[f], name)
                if text:
                    break
            else:  # no words say what it is: the line that reads it
                text = next((f"read as {_code(t)}" for _, _, t in uses.get(name, []) if "environ" in t), "")
        out[name] = {"options": options.get(name, []), "help": text, "where": where, "internal": internal}
    return out


def environment_reference() -> str:
    env = environment_variables()
    users = {k: v for k, v in env.items() if not v["internal"]}
    internal = {k: v for k, v in env.items() if v["internal"]}

    def where(v: dict[str, Any]) -> str:
        files = list(dict.fromkeys(f for f, _ in v["where"]))
        return ", ".join(f"`{f}`" for f in files[:4]) + (f" and {len(files) - 4} more" if len(files) > 4 else "")

    out = [
        "# Environment variables",
        "",
        GENERATED_NOTE.format(
            source="the CLI's options and every `PREDICTABASE_*` name in the code (`predictabase/`, `ingest/`, "
            "`dashboards/`)"
        ),
        "",
        (
            "An option's variable is read when the option is not given on the command line; the others are read where "
            "the table says."
        ),
        "",
        "| variable | stands for | what it does | read in |",
        "|---|---|---|---|",
    ]
    for name, v in users.items():
        opts = "<br>".join(_code(o) for o in v["options"])
        out.append(f"| `{name}` | {opts} | {_md(v['help'])} | {where(v)} |")
    if internal:
        out += [
            "",
            "Set by predictabase itself for the dbt subprocesses it starts (not a setting): "
            + ", ".join(f"`{k}`" for k in internal)
            + ".",
            "",
        ]
    out += [
        "",
        (
            "Other variables read by the tools predictabase runs: `DOCS_WAREHOUSE` (this site's build: the "
            "warehouse whose snapshot fills the results tables), dbt's and DuckDB's own."
        ),
        "",
    ]
    return "\n".join(out)


# ----------------------------------------------------------------------------------------------------- references


def _references():
    from predictabase.ingest.sources.references import load_references

    return load_references()


def references_bib() -> str:
    """Every reference's BibTeX, in the file's order: the same entries as mart_references and the dashboard's
    downloads."""
    return "\n\n".join(r.bibtex for r in _references()) + "\n"


def references_page() -> str:
    refs = _references()
    out = [
        "# References",
        "",
        GENERATED_NOTE.format(source="`ingest/sources/references.toml`"),
        "",
        (
            "The works the warehouse's numbers come from: the papers whose methods the marts reproduce, the datasets "
            "they read and the models they show. The same entries, as BibTeX: [references.bib](../references.bib) "
            '(also in the published `mart_references`, and under every dashboard page\'s "How to cite").'
        ),
        "",
    ]
    for kind, title in (("paper", "Papers"), ("dataset", "Datasets"), ("model", "Models")):
        rows = [r for r in refs if r.kind == kind]
        if not rows:
            continue
        out += [f"## {title}", ""]
        for r in rows:
            who = r.authors or ""
            year = f" ({r.year})" if r.year else ""
            venue = f" *{r.venue}*." if r.venue else ""
            url = r.entry.fields.get("url")
            link = f" <{url.strip('{}')}>" if url else ""
            out.append(f'- <span id="{r.key}"></span>{who}{year}. {r.title}.{venue}{link} `{r.key}`')
        out.append("")
    return "\n".join(out)


# ------------------------------------------------------------------------------------------------------ all pages


def pages(dbt_docs_link: str | None = None) -> dict[str, str]:
    """Every generated file: its path under docs/ -> its text."""
    return {
        "reference/cli.md": cli_reference(),
        "reference/marts.md": marts_reference(dbt_docs_link),
        "reference/configuration.md": config_reference(),
        "reference/environment.md": environment_reference(),
        "methods/references.md": references_page(),
        "references.bib": references_bib(),
    }


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python scripts/docs_reference.py OUT_DIR")
    for rel, text in pages().items():
        target = Path(sys.argv[1]) / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        print(target)
