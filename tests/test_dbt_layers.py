"""The dbt project's layers, read from its model files and YAML (no dbt run, no database; well under a second).

A model reads the layers below its own: staging reads sources (and seeds, and other staging views), intermediate
reads staging and intermediate, a mart reads staging and intermediate. A mart never reads another mart, with one
exception: a summary over published results (the scoreboard; the per-model summaries of a published per-word or
per-context mart), whose point is to gather exactly what other marts publish. Such a mart says so in its YAML,
`config: {meta: {gathers_marts: true}}`, and its description names the marts it gathers. Logic that several marts
share lives in an intermediate model, which the mart publishes as is (`select * from {{ ref('int_...') }}`).

A model's reads are its `ref('...')` calls: in the SQL (a macro's arguments included) and `dbt.ref("...")` in a
Python model; the macros themselves ref no mart.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from predictabase.core.config import DBT_PROJECT_DIR

MODELS = DBT_PROJECT_DIR / "models"
LAYERS = ("staging", "intermediate", "marts")
SQL_REF = re.compile(r"""\bref\(\s*['"](\w+)['"]\s*\)""")
PY_REF = re.compile(r"""\bdbt\.ref\(\s*['"](\w+)['"]\s*\)""")
JINJA_COMMENT = re.compile(r"\{#.*?#\}", re.S)


def model_files() -> dict[str, Path]:
    """Every model of the project by name: its .sql or .py file under models/<layer>/<domain>/."""
    out: dict[str, Path] = {}
    for path in sorted(MODELS.rglob("*")):
        if path.suffix in (".sql", ".py") and path.is_file():
            assert path.stem not in out, f"two models named {path.stem}: {out[path.stem]} and {path}"
            out[path.stem] = path
    return out


def layer(path: Path) -> str:
    return path.relative_to(MODELS).parts[0]


def refs(path: Path) -> set[str]:
    """The names a model file refs."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        return set(PY_REF.findall(text))
    return set(SQL_REF.findall(JINJA_COMMENT.sub("", text)))


def model_entries() -> dict[str, dict]:
    """Every model entry of the YAML files under models/, by name."""
    out = {}
    for path in sorted(MODELS.rglob("*.yml")):
        for entry in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("models") or []:
            out[entry["name"]] = entry
    return out


def gathers_marts(entry: dict) -> bool:
    """The YAML's `config: {meta: {gathers_marts: true}}` (or the older top-level `meta:`)."""
    meta = {**(entry.get("meta") or {}), **((entry.get("config") or {}).get("meta") or {})}
    return meta.get("gathers_marts") is True


def marts_read(files: dict[str, Path]) -> dict[str, set[str]]:
    """mart -> the marts it refs."""
    marts = {n for n, p in files.items() if layer(p) == "marts"}
    return {n: refs(files[n]) & marts for n in sorted(marts)}


def test_every_model_is_in_a_layer_and_named_for_it():
    prefixes = {"staging": "stg_", "intermediate": "int_", "marts": "mart_"}
    for name, path in model_files().items():
        assert layer(path) in LAYERS, f"{path}: models/<layer>/<domain>/, layer one of {LAYERS}"
        assert len(path.relative_to(MODELS).parts) == 3, f"{path}: models/<layer>/<domain>/<model>"
        assert name.startswith(prefixes[layer(path)]), (
            f"{path}: a model of {layer(path)} is named {prefixes[layer(path)]}*"
        )


def test_refs_name_models_or_seeds():
    files = model_files()
    seeds = {p.stem for p in (DBT_PROJECT_DIR / "seeds").rglob("*.csv")}
    for name, path in files.items():
        unknown = refs(path) - set(files) - seeds
        assert not unknown, f"{name} refs {sorted(unknown)}: no model or seed of that name (a ref the test missed?)"


def test_staging_and_intermediate_read_no_mart():
    files = model_files()
    below = {"staging": {"staging"}, "intermediate": {"staging", "intermediate"}}
    for name, path in files.items():
        if layer(path) not in below:
            continue
        wrong = sorted(r for r in refs(path) if r in files and layer(files[r]) not in below[layer(path)])
        assert not wrong, f"{name} ({layer(path)}) refs {wrong}, a layer above its own"


def test_no_macro_refs_a_mart():
    """A macro's refs are those of every model that calls it, so a macro that read a mart would hide the read."""
    marts = {n for n, p in model_files().items() if layer(p) == "marts"}
    for path in sorted((DBT_PROJECT_DIR / "macros").rglob("*.sql")):
        found = set(SQL_REF.findall(JINJA_COMMENT.sub("", path.read_text(encoding="utf-8")))) & marts
        assert not found, f"{path.name} refs the marts {sorted(found)}; pass the relation from the model"


def test_a_mart_reads_marts_only_when_it_says_it_gathers_them():
    entries = model_entries()
    unmarked = {
        name: sorted(read)
        for name, read in marts_read(model_files()).items()
        if read and not gathers_marts(entries.get(name) or {})
    }
    assert not unmarked, (
        f"marts that ref marts: {unmarked}. Read their intermediate model instead (move what they share into "
        "int_*, the mart then publishes it as is), or, for a summary over published results, mark the mart "
        "`config: {meta: {gathers_marts: true}}` and name the marts in its description"
    )


def test_a_mart_marked_as_gathering_marts_gathers_them_and_names_them():
    entries = model_entries()
    files = model_files()
    read = marts_read(files)
    marked = sorted(n for n, e in entries.items() if gathers_marts(e))
    assert marked, "no mart gathers marts: drop this test's exception rather than keep it unused"
    for name in marked:
        assert name in files and layer(files[name]) == "marts", f"{name}: only a mart may be marked gathers_marts"
        assert read[name], f"{name} is marked gathers_marts but refs no mart: remove the mark"
        description = entries[name].get("description") or ""
        unnamed = sorted(m for m in read[name] if m not in description)
        assert not unnamed, f"{name}: its description does not name the marts it gathers: {unnamed}"


def test_the_checks_see_a_mart_reading_a_mart(tmp_path):
    """The ref patterns find a macro argument and a Python model's dbt.ref, and skip a Jinja comment."""
    sql = tmp_path / "m.sql"
    sql.write_text("{# ref('mart_c') #}\nwith t as ({{ macro(ref('mart_a'), ref( \"int_b\" )) }}) select 1")
    py = tmp_path / "m.py"
    py.write_text('def model(dbt, session):\n    return dbt.ref("mart_d").df()\n')
    assert refs(sql) == {"mart_a", "int_b"}
    assert refs(py) == {"mart_d"}


@pytest.mark.parametrize(
    "model", ["int_reading_words", "int_reading_observations", "int_reading_word_means", "int_reading_surprisal"]
)
def test_the_reading_inputs_of_the_regressions_are_in_the_reading_folder(model):
    """The per-word predictors, readings, means and surprisals are about reading, not regression: several domains
    read them (the regressions, the self-paced reading marts, the corpus inventory, the words export, xlang)."""
    assert model_files()[model].parent == MODELS / "intermediate" / "reading"
