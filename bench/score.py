"""Benchmark the scorer against a bare batched forward pass (and minicons), model by model, on the same texts.

    python bench/score.py --device cpu --models smollm2-135m gemma3-270m config-1b --pairs 3 \\
        --max-tokens config-1b=400
    python bench/score.py --device cuda --models smollm2-135m gemma3-270m config-1b config-7b   # bench/gpu_score.sh

Per model, one table row:
A = the scorer (tokenize, windows, length-sorted batches, forward, float32 log-softmax, rank, entropy,
top-k, word-initial mass, Arrow table; no Parquet write).
B = the bare forward: the same windows and batches, the same weights and dtype: forward, float32
log_softmax over all positions, gather of the actual tokens, nothing else (the floor an expert writes by hand).
A and B alternate pair by pair (A first in odd pairs, B first in even ones); the row gives each pair's
throughput ratio A/B (= time B / time A) and their median, since other work on the machine changes between pairs.
MFU = 2 x N x tokens / seconds / peak FLOP/s, N = the parameters that take part in a matrix product per
token: every parameter except the embedding tables (lookups), with the LM head counted even where it
shares its weights with the token table (tied). Attention's own score/value products are not counted (the
2N-per-token forward convention). tokens = the scored (real) tokens, not padding. The peak: --peak-tflops,
else the datasheet dense figure of the detected GPU for the dtype (PEAK_TFLOPS), else (CPU) a large
matrix product in the timing dtype measured in this run.
fp32 vs bf16 (and fp16 on CUDA): the scorer's log-probabilities of the same tokens from the model loaded in
float32 and in the half dtype (the same weights, rounded): max and mean |difference| in nats.
config-1b / config-3b / config-7b: Llama-shaped models built from a config (TinyLlama-1.1B, Llama-3.2-3B,
Llama-2-7B shapes; SmolLM2's real tokenizer and 49,152-row tied head; seeded random weights), for timing only.
C = minicons IncrementalLMScorer.token_score on the same model object (full context, batches of 8 texts),
alternating with A pair by pair (when minicons is installed and not --no-minicons).
--bos-evidence: mean log-prob of the model on UCL sentences with BOS id 0 vs id 1.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import os
import platform
import signal
import statistics
import sys
import time
import types
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from predictabase.core.config import paths as get_paths  # noqa: E402
from predictabase.ingest.scoring.engine import Scorer, make_batches, make_windows, memory_batch_tokens  # noqa: E402
from predictabase.ingest.scoring.models import LoadedModel, load_model, tokenizer_sha256  # noqa: E402
from predictabase.ingest.scoring.profile import TokenizerProfile, encode  # noqa: E402
from tests.scoring_helpers import natural_stories, ucl_sentences  # noqa: E402 (imports no duckdb)


def _import_pipeline():
    """predictabase.ingest.scoring.pipeline imports duckdb and polars (through predictabase.ingest.raw) at module
    level; the GPU machine's Python has neither, and the bench calls nothing that uses them: stand-ins there."""
    for name in ("duckdb", "polars"):
        try:
            __import__(name)
        except ImportError:
            sys.modules[name] = types.ModuleType(name)
    from predictabase.ingest.scoring import pipeline

    return pipeline


pipeline = _import_pipeline()
Document, ScoreSettings, build_table, effective_lengths = (
    pipeline.Document,
    pipeline.ScoreSettings,
    pipeline.build_table,
    pipeline.effective_lengths,
)

MIRROR = Path(os.environ.get("PREDICTABASE_MIRROR", ROOT.parent / "shared" / "data"))

# dense (no sparsity) peak TFLOP/s from the datasheets, by a substring of torch.cuda.get_device_name() (first
# match wins) and dtype: bf16/fp16 tensor cores; float32 = plain FP32 (no TF32: PyTorch's default for matmul)
PEAK_TFLOPS = [
    ("H100 PCIe", {"bfloat16": 756.0, "float16": 756.0, "float32": 51.0}),
    ("H100 NVL", {"bfloat16": 835.0, "float16": 835.0, "float32": 60.0}),
    ("H100", {"bfloat16": 989.0, "float16": 989.0, "float32": 67.0}),  # SXM
    ("H200", {"bfloat16": 989.0, "float16": 989.0, "float32": 67.0}),
    ("GH200", {"bfloat16": 989.0, "float16": 989.0, "float32": 67.0}),
    ("A100", {"bfloat16": 312.0, "float16": 312.0, "float32": 19.5}),
    ("L40S", {"bfloat16": 362.0, "float16": 362.0, "float32": 91.6}),
    ("L4", {"bfloat16": 121.0, "float16": 121.0, "float32": 30.3}),
    ("A10G", {"bfloat16": 70.0, "float16": 70.0, "float32": 35.0}),
]

# config-built Llama shapes (timing only): hidden, intermediate, layers, heads, key/value heads
CONFIG_SHAPES = {
    "config-1b": (2048, 5632, 22, 32, 4),  # TinyLlama-1.1B
    "config-3b": (3072, 8192, 28, 24, 8),  # Llama-3.2-3B
    "config-7b": (4096, 11008, 32, 32, 32),  # Llama-2-7B
}
CONFIG_SEED = 0
CONFIG_CONTEXT = 2048


def n_tokens(tok, texts):
    return sum(len(x) for x in tok(texts, add_special_tokens=False)["input_ids"])


def select_texts(tok, texts: list[str], max_tokens: int | None, min_tokens: int) -> list[str]:
    """The texts in order up to about max_tokens, then repeated (whole list) up to min_tokens (at most
    max_tokens)."""
    if max_tokens:
        out, n = [], 0
        for t in texts:
            if n >= max_tokens:
                break
            out.append(t)
            n += n_tokens(tok, [t])
        texts = out
    n = n_tokens(tok, texts)
    want = min(min_tokens, max_tokens) if max_tokens else min_tokens
    if want and n and n < want:
        texts = texts * -(-want // n)
    return texts


# --- models -------------------------------------------------------------------------------------------
def sync(device):
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def free(device):
    gc.collect()
    if str(device).startswith("cuda"):
        torch.cuda.empty_cache()


DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def config_tokenizer(tokenizer_dir: str | None):
    """SmolLM2's tokenizer: from a saved tokenizer folder (--tokenizer), else from the installed GGUF."""
    from transformers import AutoTokenizer

    if tokenizer_dir:
        return AutoTokenizer.from_pretrained(tokenizer_dir)
    from predictabase.ingest.scoring.models import smollm2_gguf

    gguf = smollm2_gguf()
    return AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)


def random_model(cfg, tok, key: str, model_id: str, device: str, dtype: str) -> LoadedModel:
    """The model of `cfg` with seeded random weights, built in float32 on the device, then cast: every dtype
    gets the same weights, rounded."""
    from transformers import AutoModelForCausalLM

    from predictabase.ingest.scoring.models import max_positions

    torch.manual_seed(CONFIG_SEED)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    model = model.to(DTYPES[dtype]).eval()
    return LoadedModel(
        model=model,
        tokenizer=tok,
        model_key=key,
        model_id=model_id,
        model_revision=f"seed{CONFIG_SEED}",
        tokenizer_name=type(tok).__name__,
        tokenizer_sha256=tokenizer_sha256(tok),
        vocab_size=model.get_output_embeddings().weight.shape[0],
        dtype=dtype,
        device=device,
        max_positions=max_positions(model.config),
        model_type=str(cfg.model_type),
    )


def build_config_model(name: str, device: str, dtype: str, tok) -> LoadedModel:
    """A Llama of CONFIG_SHAPES[name] with SmolLM2's tokenizer, seeded random weights."""
    from transformers import LlamaConfig

    hidden, inter, layers, heads, kv = CONFIG_SHAPES[name]
    cfg = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=hidden,
        intermediate_size=inter,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv,
        max_position_embeddings=CONFIG_CONTEXT,
        bos_token_id=0,
        eos_token_id=tok.eos_token_id,
        tie_word_embeddings=True,
    )
    return random_model(cfg, tok, name, f"config:{name}:seed{CONFIG_SEED}", device, dtype)


def build_twin(folder: str, device: str, dtype: str) -> LoadedModel:
    """twin:FOLDER - a model's own config.json and tokenizer files (no weights), seeded random weights: the
    same shapes and kernels as the pretrained model, for timing where its weights cannot travel."""
    from transformers import AutoConfig, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    cfg = AutoConfig.from_pretrained(folder)
    name = Path(folder).name
    return random_model(cfg, tok, name, f"twin:{name}:seed{CONFIG_SEED}", device, dtype)


def load(spec: str, device: str, dtype: str, tok_dir: str | None) -> LoadedModel:
    if spec in CONFIG_SHAPES:
        return build_config_model(spec, device, dtype, config_tokenizer(tok_dir))
    if spec.startswith("twin:"):
        return build_twin(spec[len("twin:") :], device, dtype)
    return load_model(spec, get_paths(), device, dtype)


def param_counts(model) -> tuple[int, int]:
    """(all parameters, N for MFU: all but the embedding lookup tables (tokens; positions where learned), plus
    the LM head's matrix even where it is tied to the token table)."""
    total = sum(p.numel() for p in model.parameters())
    tables = {id(m.weight): m.weight for m in model.modules() if isinstance(m, torch.nn.Embedding)}
    head = model.get_output_embeddings().weight
    n = total - sum(w.numel() for w in tables.values()) + (head.numel() if id(head) in tables else 0)
    return total, n


# --- the three runs -----------------------------------------------------------------------------------
def windows_of(enc, ctx, stride):
    return [w for d, (ids, _) in enumerate(enc) for w in make_windows(d, len(ids), ctx, stride)]


TABLE_SECONDS = [0.0]  # the time run_scorer spent in build_table (host only), last call


def run_scorer(scorer, tok, bos, texts, ctx, stride, batch_tokens, table=True):
    enc = encode(tok, texts, bos)
    res = scorer.score_windows([ids for ids, _ in enc], make_batches(windows_of(enc, ctx, stride), batch_tokens))
    if not table:
        return res
    t0 = time.perf_counter()
    docs = [Document(str(i), i, t) for i, t in enumerate(texts)]
    out = build_table("bench", "bench", "bench", docs, enc, res, scorer)
    TABLE_SECONDS[0] = time.perf_counter() - t0
    return out


def run_bare(model, tok, bos, texts, ctx, stride, batch_tokens, device):
    """Forward, float32 log_softmax over all positions, gather: nothing else."""
    enc = encode(tok, texts, bos)
    ids_list = [ids for ids, _ in enc]
    out = []
    with torch.inference_mode():
        for batch in make_batches(windows_of(enc, ctx, stride), batch_tokens):
            width = batch[0].length
            inp = np.full((len(batch), width), bos.token_id, dtype=np.int64)
            att = np.zeros((len(batch), width), dtype=np.int64)
            for r, w in enumerate(batch):
                seq = ids_list[w.doc][w.begin : w.end]
                inp[r, 1 : 1 + len(seq)] = seq
                att[r, : 1 + len(seq)] = 1
            inp_t, att_t = torch.from_numpy(inp).to(device), torch.from_numpy(att).to(device)
            logits = model(input_ids=inp_t, attention_mask=att_t, use_cache=False).logits
            lp = torch.log_softmax(logits[:, :-1].float(), -1)
            out.append(lp.gather(2, inp_t[:, 1:, None])[..., 0].cpu())
    return out


def run_minicons(lm, texts, bos_token, device):
    from minicons import scorer as mscorer

    s = mscorer.IncrementalLMScorer(lm.model, device=device, tokenizer=lm.tokenizer)
    scores = []
    for i in range(0, len(texts), 8):
        batch = [bos_token + t for t in texts[i : i + 8]]
        scores += s.token_score(batch, bos_token=False)
    return scores


def logprobs(res) -> np.ndarray:
    return np.concatenate([res[d]["logprob_nats"] for d in sorted(res)])


def bos_evidence(lm, texts):
    model, tok = lm.model, lm.tokenizer
    rows = []
    for bos_id in (0, 1):
        tot, n = 0.0, 0
        for t in texts:
            ids = tok(t, add_special_tokens=False)["input_ids"]
            with torch.inference_mode():
                lp = torch.log_softmax(
                    model(torch.tensor([[bos_id] + ids], device=lm.device)).logits[0, :-1].float(), -1
                )
            tot += lp[torch.arange(len(ids)), torch.tensor(ids)].sum().item()
            n += len(ids)
        rows.append((bos_id, tok.convert_ids_to_tokens(bos_id), tot / n, n))
    return rows


# --- peaks --------------------------------------------------------------------------------------------
def measured_peak_tflops(device: str, dtype: torch.dtype, size: int, seconds: float = 3.0) -> float:
    """The best of repeated size^3 matrix products in `dtype` on the device (TFLOP/s)."""
    a = torch.randn(size, size, device=device).to(dtype)
    b = torch.randn(size, size, device=device).to(dtype)
    best, t_end = 0.0, time.perf_counter() + seconds
    with torch.inference_mode():
        for _ in range(2):
            a @ b
        sync(device)
        while time.perf_counter() < t_end:
            t0 = time.perf_counter()
            for _ in range(4):
                a @ b
            sync(device)
            best = max(best, 4 * 2 * size**3 / (time.perf_counter() - t0))
    return best / 1e12


def datasheet_peak(device: str, dtype: str) -> tuple[float | None, str]:
    if not device.startswith("cuda"):
        return None, ""
    name = torch.cuda.get_device_name(torch.device(device))
    for key, peaks in PEAK_TFLOPS:
        if key in name:
            return peaks.get(dtype), f"{name}: datasheet dense {dtype} {peaks.get(dtype)} TFLOP/s"
    return None, f"{name}: not in the peak table"


# --- one model ----------------------------------------------------------------------------------------
def bench_model(spec: str, args, texts_all: list[str], peak: tuple[float, str]) -> dict:
    device, timing_dtype = args.device, args.dtype
    halves = [] if args.no_diff else ["bfloat16", "float16"] if device.startswith("cuda") else ["bfloat16"]
    row: dict = {"model": spec, "dtype": timing_dtype}
    # CUDA (timing in a half dtype): the float32 model first, for the reference log-probabilities, then
    # the other half dtypes, then the timed one (one model on the device at a time)
    first = "float32" if halves and timing_dtype != "float32" else timing_dtype
    t_load = time.perf_counter()
    lm = load(spec, device, first, args.tokenizer)
    tok = lm.tokenizer
    profile = TokenizerProfile.build(tok, lm.model_type, lm.vocab_size, spec)
    bos = profile.bos
    ctx, stride = effective_lengths(lm, ScoreSettings())  # the scorer's defaults
    texts = select_texts(tok, texts_all, args.max_tokens.get(spec), args.min_tokens)
    n = n_tokens(tok, texts)
    row["model"] = (
        lm.model_key.removeprefix("twin-") + " (random twin)"
        if spec.startswith("twin:")
        else lm.model_key
        if spec.endswith(".gguf")
        else spec
    )
    row.update(tokens=n, texts=len(texts), batch_tokens=args.batch_tokens or auto_batch_tokens(lm.model, device, ctx))
    bt = row["batch_tokens"]
    print(
        f"\n== {spec}: {lm.model_id}; {len(texts)} texts, {n} tokens; context {ctx}, stride {stride}; "
        f"BOS {bos.policy} id {bos.token_id}; loaded in {time.perf_counter() - t_load:.1f} s",
        flush=True,
    )

    def diff(dt, ref, lp, head_fp32):
        d = np.abs(lp - ref)
        row[f"maxdiff_{dt}"], row[f"meandiff_{dt}"] = float(np.max(d)), float(np.mean(d))
        print(
            f"   {dt} vs float32: max |logprob difference| {row[f'maxdiff_{dt}']:.3e}, mean "
            f"{row[f'meandiff_{dt}']:.3e} nats over {len(d)} tokens (LM head output in float32: {head_fp32})",
            flush=True,
        )

    def compare(dt, ref):
        """Score the texts with the model loaded in `dt` and compare with the float32 log-probabilities (a
        failure, e.g. the scorer's probe check refusing float16 overflow, is reported in its place)."""
        try:
            m = load(spec, device, dt, args.tokenizer)
            s = Scorer(m.model, profile, 10, m.device)
            t0 = time.perf_counter()
            lp = logprobs(run_scorer(s, tok, bos, texts, ctx, stride, bt, table=False))
            print(f"   {dt} pass: {n / (time.perf_counter() - t0):.1f} tok/s", flush=True)
            diff(dt, ref, lp, s._head_fp32 is not None)
            del s, m
        except Exception as exc:  # noqa: BLE001
            row[f"maxdiff_{dt}"] = row[f"meandiff_{dt}"] = None
            print(f"   {dt}: FAILED: {type(exc).__name__}: {str(exc)[:300]}", flush=True)
        free(device)

    ref = None
    if first != timing_dtype:
        s = Scorer(lm.model, profile, 10, lm.device)
        t0 = time.perf_counter()
        ref = logprobs(run_scorer(s, tok, bos, texts, ctx, stride, bt, table=False))
        print(f"   float32 reference pass: {n / (time.perf_counter() - t0):.1f} tok/s", flush=True)
        del s, lm
        free(device)
        for dt in halves:
            if dt != timing_dtype:
                compare(dt, ref)
        lm = load(spec, device, timing_dtype, args.tokenizer)
    model = lm.model
    row["params"], row["n_mfu"] = param_counts(model)
    row["attn"] = getattr(model.config, "_attn_implementation", "?")
    scorer = Scorer(model, profile, 10, lm.device)
    row["split"], row["head_fp32"] = scorer._split, scorer._head_fp32 is not None
    row["compiled"] = scorer._fused is not None
    print(
        f"   timing {lm.dtype} on {lm.device}; attention {row['attn']}; batch_tokens {bt}; "
        f"split LM head {scorer._split}; LM head output in float32 {row['head_fp32']}; "
        f"statistics compiled {row['compiled']}; "
        f"{row['params'] / 1e6:.1f} M parameters, N = {row['n_mfu'] / 1e6:.1f} M for MFU",
        flush=True,
    )
    warm = texts if device.startswith("cuda") else texts[:4]  # on CUDA the first full passes pick kernels
    run_scorer(scorer, tok, bos, warm, ctx, stride, bt)
    run_bare(model, tok, bos, warm, ctx, stride, bt, device)
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    pk = peak[0]
    if args.measure_peak_per_model:  # CPU: the cores are shared, so the peak is measured next to the pairs
        pk = measured_peak_tflops(device, DTYPES[timing_dtype], 2048)
        print(f"   measured {timing_dtype} matmul peak now: {pk:.3f} TFLOP/s", flush=True)
    row["peak"] = pk
    ta, tb, tt = [], [], []
    for i in range(args.pairs):
        t = {}
        for which in ("A", "B") if i % 2 == 0 else ("B", "A"):
            sync(device)
            t0 = time.perf_counter()
            if which == "A":
                table = run_scorer(scorer, tok, bos, texts, ctx, stride, bt)
            else:
                run_bare(model, tok, bos, texts, ctx, stride, bt, device)
            sync(device)
            t[which] = time.perf_counter() - t0
        ta.append(t["A"])
        tb.append(t["B"])
        tt.append(TABLE_SECONDS[0])
        print(
            f"   pair {i + 1}: scorer {n / t['A']:10.1f} tok/s  bare {n / t['B']:10.1f} tok/s  "
            f"scorer/bare {t['B'] / t['A']:.3f}  (Arrow table {tt[-1]:.2f} s of the scorer's {t['A']:.2f} s; "
            f"without it {t['B'] / (t['A'] - tt[-1]):.3f})",
            flush=True,
        )
    row["compiled"] = scorer._fused is not None  # a failure on the way switches to the eager path
    if device.startswith("cuda"):
        row["peak_mem_gib"] = torch.cuda.max_memory_allocated() / 2**30
    ratios = [b / a for a, b in zip(ta, tb)]
    row.update(
        ratios=ratios,
        ratio=statistics.median(ratios),
        tps_a=statistics.median(n / a for a in ta),
        tps_b=statistics.median(n / b for b in tb),
        ratio_core=statistics.median(b / (a - x) for a, b, x in zip(ta, tb, tt)),
        table_share=statistics.median(x / a for a, x in zip(ta, tt)),
    )
    row["mfu_a"] = 2 * row["n_mfu"] * row["tps_a"] / (pk * 1e12) if pk else None
    row["mfu_b"] = 2 * row["n_mfu"] * row["tps_b"] / (pk * 1e12) if pk else None
    lp = np.asarray(table.column("logprob_nats"), dtype=np.float64)
    row["surprisal"] = float(-lp.mean())
    if args.bos_evidence:
        for bos_id, name, mean, nn in bos_evidence(lm, texts[:50]):
            print(f"   BOS id {bos_id} {name}: mean logprob {mean:.4f} nats/token over {nn} tokens")
    if not args.no_minicons:
        minicons_compare(lm, scorer, tok, bos, texts, ctx, stride, bt, table, args.pairs)
    del scorer, model, lm
    free(device)
    if halves and timing_dtype == "float32":  # CPU: the timed table is the reference
        ref = lp
        for dt in halves:
            compare(dt, ref)
    elif timing_dtype in halves:
        diff(timing_dtype, ref, lp, row["head_fp32"])
    return row


def auto_batch_tokens(model, device: str, ctx: int) -> int:
    """CPU: the pipeline's CPU_BATCH_TOKENS. CUDA: sized from the device's total memory, so that the bare
    forward's full [tokens, vocab] float32 log-softmax fits too (the same batches for A and B)."""
    if not device.startswith("cuda"):
        return pipeline.CPU_BATCH_TOKENS
    total = torch.cuda.get_device_properties(torch.device(device)).total_memory
    return memory_batch_tokens(model, total, ctx, full_logits=True)


def minicons_compare(lm, scorer, tok, bos, texts, ctx, stride, bt, table, pairs):
    try:
        import minicons  # noqa: F401
    except ImportError:
        print("   minicons not installed (pip install minicons)")
        return
    n = n_tokens(tok, texts)
    lp = np.array(table.column("logprob_nats").to_pylist())
    mratios = []
    for i in range(pairs):
        t = {}
        for which in ("A", "C") if i % 2 == 0 else ("C", "A"):
            sync(lm.device)
            t0 = time.perf_counter()
            if which == "A":
                run_scorer(scorer, tok, bos, texts, ctx, stride, bt)
            else:
                ms = run_minicons(lm, texts, bos.token, lm.device)
            sync(lm.device)
            t[which] = time.perf_counter() - t0
        mratios.append(t["C"] / t["A"])
        print(
            f"   pair {i + 1}: scorer {n / t['A']:10.1f} tok/s  minicons {n / t['C']:10.1f} tok/s  {mratios[-1]:6.3f}"
        )
    # minicons: full context, BOS given as text; compare where our context is the whole prefix
    doc = np.array(table.column("doc_id").to_pylist()).astype(int)
    diffs = []
    for d, sc in enumerate(ms):
        ours = lp[doc == d]
        theirs = np.array([s for _, s in sc], dtype=np.float64)
        if len(theirs) == len(ours) + 1:  # minicons lists the BOS itself, with score 0
            theirs = theirs[1:]
        k = min(len(ours), len(theirs), ctx - 1)
        diffs.append(np.abs(ours[:k] - theirs[:k]).max())
    print(
        f"   median minicons/scorer time ratio {statistics.median(mratios):.3f}; max |logprob diff| vs scorer "
        f"{max(diffs):.2e} (tokens with index < {ctx - 1})"
    )


# --- main ---------------------------------------------------------------------------------------------
def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def table_lines(rows: list[dict], device: str, half: list[str]) -> list[str]:
    cols = [
        "model",
        "params (M)",
        "N for MFU (M)",
        "dtype",
        "attention",
        "batch tokens",
        "tokens",
        "scorer tok/s",
        "bare tok/s",
        "scorer/bare per pair",
        "median",
        "median w/o Arrow table",
        "peak TFLOP/s",
        "MFU scorer",
        "MFU bare",
    ]
    for dt in half:
        short = {"bfloat16": "bf16", "float16": "fp16"}[dt]
        cols += [f"max abs fp32-{short}", f"mean abs fp32-{short}"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        vals = [
            r["model"],
            f"{r['params'] / 1e6:.1f}",
            f"{r['n_mfu'] / 1e6:.1f}",
            r["dtype"],
            r["attn"],
            str(r["batch_tokens"]),
            str(r["tokens"]),
            f"{r['tps_a']:.1f}",
            f"{r['tps_b']:.1f}",
            " ".join(f"{x:.3f}" for x in r["ratios"]),
            f"{r['ratio']:.3f}",
            f"{r['ratio_core']:.3f} (table {100 * r['table_share']:.0f}%)",
            fmt(r["peak"], ".3g"),
            fmt(r["mfu_a"] and 100 * r["mfu_a"], ".1f") + ("%" if r["mfu_a"] else ""),
            fmt(r["mfu_b"] and 100 * r["mfu_b"], ".1f") + ("%" if r["mfu_b"] else ""),
        ]
        for dt in half:
            vals += [fmt(r.get(f"maxdiff_{dt}"), ".2e"), fmt(r.get(f"meandiff_{dt}"), ".2e")]
        lines.append("| " + " | ".join(vals) + " |")
    return lines


def parse_max_tokens(items: list[str]) -> dict[str, int]:
    out = {}
    for it in items:
        name, _, n = it.partition("=")
        out[name] = int(n)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--models",
        nargs="+",
        default=None,
        help="model specs (aliases, directories, .gguf files) and/or " + ", ".join(CONFIG_SHAPES),
    )
    ap.add_argument("--model", default=None, help="one model (as --models MODEL)")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--device", default=None)
    ap.add_argument("--dtype", default=None, help="timing dtype (default: bfloat16 on CUDA, float32 on CPU)")
    ap.add_argument("--ucl", type=int, default=205, help="UCL sentences (first N)")
    ap.add_argument("--stories", type=int, default=10, help="Natural Stories (first N)")
    ap.add_argument(
        "--max-tokens",
        action="append",
        default=[],
        metavar="MODEL=N",
        help="use only the first texts up to about N tokens for MODEL (e.g. config-1b=400 on a CPU)",
    )
    ap.add_argument(
        "--min-tokens",
        type=int,
        default=None,
        help="repeat the texts up to this many tokens (default: 200,000 on CUDA, none on CPU)",
    )
    ap.add_argument(
        "--batch-tokens",
        type=int,
        default=None,
        help="padded tokens per batch (default: the pipeline's on CPU, memory-sized on CUDA)",
    )
    ap.add_argument("--peak-tflops", type=float, default=None, help="device peak for MFU (TFLOP/s)")
    ap.add_argument(
        "--tokenizer",
        default=None,
        help="SmolLM2 tokenizer folder for config-* models (default: from the installed GGUF)",
    )
    ap.add_argument("--no-diff", action="store_true", help="skip the float32 vs half-precision comparison")
    ap.add_argument("--no-minicons", action="store_true")
    ap.add_argument("--bos-evidence", action="store_true")
    ap.add_argument("--mirror", default=None, help="data mirror (default: $PREDICTABASE_MIRROR or ../shared/data)")
    args = ap.parse_args()
    args.models = args.models or [args.model or "smollm2-135m"]
    args.device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    cuda = args.device.startswith("cuda")
    args.dtype = args.dtype or ("bfloat16" if cuda else "float32")
    args.max_tokens = parse_max_tokens(args.max_tokens)
    args.min_tokens = args.min_tokens if args.min_tokens is not None else (200_000 if cuda else 0)
    mirror = Path(args.mirror) if args.mirror else MIRROR
    texts = ucl_sentences(mirror, args.ucl) + list(natural_stories(mirror).values())[: args.stories]

    print(
        f"bench/score.py {datetime.datetime.now().isoformat(timespec='seconds')}; command: python {' '.join(sys.argv)}"
    )
    print(
        f"torch {torch.__version__}; device {args.device}"
        + (
            f" ({torch.cuda.get_device_name(torch.device(args.device))}, "
            f"{torch.cuda.get_device_properties(torch.device(args.device)).total_memory / 2**30:.1f} GiB)"
            if cuda
            else f"; {torch.get_num_threads()} torch threads, {os.cpu_count()} CPUs, "
            f"{platform.processor() or platform.machine()}"
        )
        + f"; float32 matmul precision {torch.get_float32_matmul_precision()}"
    )
    print(
        f"texts: {args.ucl} UCL sentences + {args.stories} Natural Stories from {mirror}; "
        f"min tokens {args.min_tokens}; per-model caps {args.max_tokens or 'none'}"
    )
    sheet, sheet_note = datasheet_peak(args.device, args.dtype)
    measured = measured_peak_tflops(args.device, DTYPES[args.dtype], 8192 if cuda else 2048)
    if args.peak_tflops:
        peak = (args.peak_tflops, f"--peak-tflops {args.peak_tflops}")
    elif sheet:
        peak = (sheet, sheet_note)
    else:
        peak = (
            measured,
            f"measured in this run: best {args.dtype} {8192 if cuda else 2048}^3 matrix product "
            f"on {args.device} ({torch.get_num_threads()} threads)"
            if not cuda
            else f"{sheet_note}; measured {args.dtype} matrix product",
        )
    print(
        f"peak for MFU: {peak[0]:.3f} TFLOP/s ({peak[1]}); measured {args.dtype} matmul peak in this run "
        f"{measured:.3f} TFLOP/s",
        flush=True,
    )

    args.measure_peak_per_model = not cuda and not args.peak_tflops
    rows = []

    def stop(signum, frame):  # `timeout` (bench/gpu_score.sh): the table of the models done so far
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, stop)
    try:
        for spec in args.models:
            try:
                rows.append(bench_model(spec, args, texts, peak))
            except Exception as exc:  # noqa: BLE001 - one model failing (e.g. out of memory) leaves the others
                print(f"   {spec}: FAILED: {type(exc).__name__}: {exc}", flush=True)
                free(args.device)
    except KeyboardInterrupt as exc:
        print(f"\n   stopped ({exc}) during {spec}: the table holds the models finished before it", flush=True)
    half = ["bfloat16", "float16"] if cuda else ["bfloat16"]
    if args.no_diff:
        half = []
    print("\n" + "\n".join(table_lines(rows, args.device, half)))
    peak_note = (
        f"the peak column: the best {args.dtype} 2048^3 matrix product measured just before each model's pairs"
        if args.measure_peak_per_model
        else f"{peak[0]:.3f} TFLOP/s ({peak[1]})"
    )
    print(
        f"\nMFU = 2 x N x tokens/s / peak; {peak_note}; N = all parameters except the embedding "
        "(lookup) tables, LM head included (tied or not); attention score/value products not counted. "
        "tokens = scored tokens (no padding). scorer/bare = bare time / scorer time, pair by pair (>1: the scorer "
        "is faster); w/o Arrow table: the scorer's time less its build_table (host-side; the pipeline could "
        "overlap it with the next group's forward passes). fp32-half = |log p| difference in nats between the scorer on the float32 model and on the "
        "half-precision model (same weights, rounded), over the same tokens."
    )
    for r in rows:
        extra = f"; peak GPU memory {r['peak_mem_gib']:.1f} GiB" if "peak_mem_gib" in r else ""
        print(
            f"{r['model']}: split LM head {r['split']}, head in float32 {r['head_fp32']}, statistics compiled "
            f"{r['compiled']}, mean surprisal "
            f"{r['surprisal']:.3f} nats/token{extra}"
        )


if __name__ == "__main__":
    main()
