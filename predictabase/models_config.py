"""The models `predictabase refresh` keeps scored: `models.toml` of this checkout (or `--models FILE`,
$PREDICTABASE_MODELS). Each entry is validated here; a bad file is a one-line error naming it."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from predictabase.core.config import models_config_path
from predictabase.core.errors import OptionError
from predictabase.ingest import corpus_table

CORPORA = corpus_table.SCORED
DTYPES = ("float32", "bfloat16", "float16")
KEYS = {
    "name", "corpora", "top1", "cloze", "entropy", "entropy_samples", "entropy_alpha", "temperature", "temperatures",
    "context_length", "stride", "top_k", "dtype", "device",
}  # fmt: skip


@dataclass(frozen=True)
class ModelEntry:
    name: str  # alias, hub name, local directory or .gguf file (as for --model)
    corpora: tuple[str, ...] = CORPORA
    top1: bool = False
    cloze: bool = False
    entropy: bool = False  # the Monte-Carlo word entropies on the corpora with reading times (`predictabase entropy`)
    entropy_samples: int = 16  # whole words sampled per word position
    entropy_alpha: float = 0.5  # the Rényi entropy's order
    temperature: bool = False  # token scores under softmax(logits / T) on the corpora with reading times
    temperatures: tuple[float, ...] | None = None  # its grid (None: the step's default, Liu et al. 2024's range)
    context_length: int | None = None
    stride: int | None = None
    top_k: int = 10
    dtype: str | None = None
    device: str | None = None


def load_models_config(path: str | Path | None = None) -> list[ModelEntry]:
    """The [[model]] entries of the models file, in file order (names unique)."""
    p = models_config_path(path)
    where = f"--models {p}"
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise OptionError(where, "no such file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise OptionError(where, f"not valid TOML: {exc}") from None
    entries = data.get("model")
    if not isinstance(entries, list) or not entries:
        raise OptionError(where, "no [[model]] entries")
    out: list[ModelEntry] = []
    for i, e in enumerate(entries, 1):
        at = f"{where} [[model]] #{i}"
        unknown = set(e) - KEYS
        if unknown:
            raise OptionError(at, f"unknown key(s) {', '.join(sorted(unknown))}; allowed: {', '.join(sorted(KEYS))}")
        name = e.get("name")
        if not isinstance(name, str) or not name.strip():
            raise OptionError(at, "`name` (a model alias, hub name or path) is required")
        corpora = e.get("corpora", list(CORPORA))
        if not isinstance(corpora, list) or not all(c in CORPORA for c in corpora):
            raise OptionError(at, f"`corpora` must be a list drawn from {', '.join(CORPORA)}")
        for key in ("top1", "cloze", "entropy", "temperature"):
            if not isinstance(e.get(key, False), bool):
                raise OptionError(at, f"`{key}` must be true or false")
        samples = e.get("entropy_samples", 16)
        if not isinstance(samples, int) or isinstance(samples, bool) or not 2 <= samples <= 4096:
            raise OptionError(at, "`entropy_samples` must be an integer from 2 to 4096")
        alpha = e.get("entropy_alpha", 0.5)
        if not isinstance(alpha, int | float) or isinstance(alpha, bool) or not 0 < alpha <= 10 or alpha == 1:
            raise OptionError(at, "`entropy_alpha` must be a number > 0 and <= 10, not 1 (Rényi's order)")
        temperatures = e.get("temperatures")
        if temperatures is not None:
            from predictabase.ingest.scoring.temperature import TemperatureSettings

            ok = isinstance(temperatures, list) and all(
                isinstance(t, int | float) and not isinstance(t, bool) for t in temperatures
            )
            if not ok:
                raise OptionError(at, "`temperatures` must be a list of numbers (the grid of T; it must hold 1)")
            try:
                TemperatureSettings(temperatures=tuple(float(t) for t in temperatures)).check()
            except OptionError as exc:
                raise OptionError(at, f"`temperatures`: {exc.problem}") from None
            temperatures = tuple(float(t) for t in temperatures)
        for key, low in (("context_length", 2), ("stride", 1), ("top_k", 0)):
            v = e.get(key)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < low):
                raise OptionError(at, f"`{key}` must be an integer >= {low}")
        if e.get("dtype") is not None and e["dtype"] not in DTYPES:
            raise OptionError(at, f"`dtype` must be one of {', '.join(DTYPES)}")
        out.append(
            ModelEntry(
                name=name,
                corpora=tuple(dict.fromkeys(corpora)),
                top1=e.get("top1", False),
                cloze=e.get("cloze", False),
                entropy=e.get("entropy", False),
                entropy_samples=samples,
                entropy_alpha=float(alpha),
                temperature=e.get("temperature", False),
                temperatures=temperatures,
                context_length=e.get("context_length"),
                stride=e.get("stride"),
                top_k=e.get("top_k", 10),
                dtype=e.get("dtype"),
                device=e.get("device"),
            )
        )
    names = [m.name for m in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise OptionError(where, f"model(s) listed twice: {', '.join(dup)}")
    return out
