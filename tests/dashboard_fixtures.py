"""A small but realistic marts snapshot for the dashboard tests.

Same tables and columns as the marts `predictabase build` publishes into
`warehouse/marts.duckdb` (schema `main`). The numbers are consistent with each
other (perplexity = exp(mean surprisal), bits = nats / ln 2, ...), so a page that
showed the wrong column would show a visibly wrong value. Written like the real
publish: to a temporary file, then `os.replace`.
"""
from __future__ import annotations

import math
import uuid
import os
from datetime import datetime, timezone
from pathlib import Path

import duckdb

LN2 = math.log(2)

SOURCES = [
    # dataset, repo, commit, license, n_files, total_bytes
    ("lm_game", "bshlgrs/lm-game", "f3ba57f5182df8b56877371efae561b863a69f21", "none stated", 40, 231_504),
    ("natural_stories", "languageMIT/naturalstories", "4700daad696e942f5aba23c957a7423d0de66612",
     "CC BY-NC-SA 4.0", 1, 58_721),
    ("provo", "martin-vasilev/Provo_corpus", "736e69b1e5a0444ceb81787b789a0e375c063b89",
     "none stated; Provo itself CC BY 4.0", 1, 1_733_456),
    ("ucl", "Andrea-de-Varda/prediction-resource", "7162734da00a9a3c81d5ebaec65bdf6d59e931fc",
     "none stated", 2, 402_331),
]

# model_key, model_id, revision, tokenizer, vocab, source
MODELS = {
    "smollm2-135m": ("HuggingFaceTB/SmolLM2-135M", "93efa2f097d58c2a74874c7e644dbc9b0cee75a2", "GPT2TokenizerFast",
                     49152, "scored"),
    "gpt3-davinci": ("davinci (OpenAI API, imported)", "naturalstories@4700daad", "gpt2 BPE", 50257, "imported"),
}

# model_key, corpus, n_docs, n_tokens, n_words, n_chars, mean_surprisal_nats, se of the mean
PERPLEXITY = [
    ("smollm2-135m", "lm_game", 40, 10_912, 8_204, 46_115, 3.0412, 0.0291),
    ("smollm2-135m", "natural_stories", 10, 12_870, 10_256, 55_961, 3.2518, 0.0254),
    ("smollm2-135m", "provo", 55, 3_011, 2_689, 14_540, 3.4907, 0.0533),
    ("smollm2-135m", "ucl", 205, 2_352, 1_931, 9_376, 4.1093, 0.0701),
    ("gpt3-davinci", "natural_stories", 10, 12_996, 10_256, 55_961, 2.6731, 0.0231),
]


def _ts(s: str) -> datetime:
    return datetime.fromisoformat(s).replace(tzinfo=timezone.utc)


def create_marts(path: Path, *, built_at: str = "2025-11-23 09:41:07", scale: float = 1.0,
                 snapshot_id: str | None = None) -> Path:
    """Write a marts snapshot at `path` (atomically). `scale` multiplies every surprisal,
    so two snapshots differ visibly (the republish test)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    con = duckdb.connect(str(tmp))
    try:
        con.execute("SET TimeZone = 'UTC'")
        con.execute("""CREATE TABLE mart_sources (dataset VARCHAR, repo VARCHAR, "commit" VARCHAR, license VARCHAR,
            citation VARCHAR, n_repos BIGINT, n_files BIGINT, total_bytes BIGINT, n_verified BIGINT,
            all_verified BOOLEAN, last_fetched_at TIMESTAMPTZ)""")
        for ds, repo, commit, lic, n, size in SOURCES:
            con.execute("INSERT INTO mart_sources VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?)",
                        [ds, repo, commit, lic, f"citation for {ds}", n, size, n, True, _ts("2025-11-23 09:12:44")])

        con.execute("""CREATE TABLE mart_models (run_id VARCHAR, model_key VARCHAR, model_id VARCHAR,
            model_revision VARCHAR, tokenizer VARCHAR, dtype VARCHAR, device VARCHAR, bos_policy VARCHAR,
            bos_token VARCHAR, corpus VARCHAR, context_length INTEGER, stride INTEGER, top_k INTEGER,
            n_docs BIGINT, n_tokens BIGINT, source VARCHAR, finished_at TIMESTAMPTZ, used_in_marts BOOLEAN,
            vocab_size INTEGER, vocab_size_source VARCHAR, run_limit INTEGER, full_document BOOLEAN,
            started_at TIMESTAMPTZ, built_at TIMESTAMPTZ)""")
        con.execute("""CREATE TABLE mart_model_perplexity (model_key VARCHAR, corpus VARCHAR, run_id VARCHAR,
            model_id VARCHAR, model_revision VARCHAR, tokenizer VARCHAR, source VARCHAR, vocab_size INTEGER,
            n_docs BIGINT, n_tokens BIGINT, n_words BIGINT, n_chars BIGINT, n_bytes BIGINT,
            total_surprisal_nats DOUBLE, total_surprisal_bits DOUBLE, mean_surprisal_nats DOUBLE,
            mean_surprisal_bits DOUBLE, token_perplexity DOUBLE, token_perplexity_ci_low DOUBLE,
            token_perplexity_ci_high DOUBLE, mean_surprisal_nats_ci_low DOUBLE, mean_surprisal_nats_ci_high DOUBLE,
            bootstrap_replicates INTEGER, bits_per_byte DOUBLE, bits_per_byte_ci_low DOUBLE,
            bits_per_byte_ci_high DOUBLE, bits_per_char DOUBLE, word_perplexity DOUBLE, bits_per_word DOUBLE,
            normalized_perplexity DOUBLE, finished_at TIMESTAMPTZ, built_at TIMESTAMPTZ)""")
        for i, (key, corpus, docs, toks, words, chars, mean, se) in enumerate(PERPLEXITY):
            model_id, rev, tok, vocab, source = MODELS[key]
            run_id = f"{(0x5a17c0de + 7919 * i):08x}{(0x9e3779b1 * (i + 1)) % 2**32:08x}"
            scored = source == "scored"
            con.execute("INSERT INTO mart_models VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                        "?, ?, ?, ?, ?, ?)",
                        [run_id, key, model_id, rev, tok, "float32" if scored else None, "cpu" if scored else None,
                         "prepend" if scored else "none", "<|endoftext|>" if scored else None, corpus,
                         1024 if scored else None, 512 if scored else None, 10 if scored else None,
                         docs, toks, source, _ts("2025-11-23 09:30:00"), True,
                         vocab, "tokenizer" if scored else "gpt2 BPE", None, False,
                         _ts("2025-11-23 09:25:00"), _ts(built_at)])
            mean *= scale
            total = mean * toks
            n_bytes = chars + chars // 200  # a few non-ASCII characters
            ppl = math.exp(mean)
            lo, hi = mean - 1.96 * se, mean + 1.96 * se
            con.execute("INSERT INTO mart_model_perplexity VALUES (" + ", ".join(["?"] * 32) + ")",
                        [key, corpus, run_id, model_id, rev, tok, source, vocab, docs, toks, words, chars, n_bytes,
                         total, total / LN2, mean, mean / LN2, ppl, math.exp(lo), math.exp(hi), lo, hi, 2000,
                         total / LN2 / n_bytes, lo * toks / LN2 / n_bytes, hi * toks / LN2 / n_bytes,
                         total / LN2 / chars, math.exp(total / words), total / LN2 / words,
                         ppl / vocab, _ts("2025-11-23 09:30:00"), _ts(built_at)])
        # a scoring run that is not used by the marts (a --limit quick run)
        con.execute("INSERT INTO mart_models VALUES ('0badc0ffee123456', 'smollm2-135m', "
                    "'HuggingFaceTB/SmolLM2-135M', '93efa2f097d58c2a74874c7e644dbc9b0cee75a2', 'GPT2TokenizerFast', "
                    "'float32', 'cpu', 'prepend', '<|endoftext|>', 'provo', 1024, 512, 10, 5, 287, 'scored', "
                    "TIMESTAMPTZ '2025-11-23 09:20:00+00', false, 49152, 'tokenizer', 5, false, "
                    "TIMESTAMPTZ '2025-11-23 09:19:00+00', ?)", [_ts(built_at)])

        con.execute("CREATE TABLE mart_warehouse_tables (table_name VARCHAR, layer VARCHAR, n_rows BIGINT, "
                    "present BOOLEAN)")
        con.executemany("INSERT INTO mart_warehouse_tables VALUES (?, ?, ?, true)", [
            ("raw.documents", "raw", 310), ("raw.game_doc_tokens", "raw", 10_912),
            ("raw.imported_word_surprisal", "raw", 7_722), ("raw.source_files", "raw", 51),
            ("raw.words", "raw", 23_080), ("parquet token_scores (complete runs)", "parquet", 41_141),
            ("parquet _run.json (complete runs)", "parquet", len(PERPLEXITY) + 1),
            ("mart_model_perplexity", "mart", len(PERPLEXITY)),
        ])
        con.execute("CREATE TABLE mart_build_info (built_at TIMESTAMPTZ, dbt_version VARCHAR, duckdb_version VARCHAR, "
                    "invocation_id VARCHAR, n_complete_runs BIGINT, n_runs_used_in_marts BIGINT)")
        con.execute("INSERT INTO mart_build_info VALUES (?, '1.11.2', 'v1.4.1', "
                    "'6f1c2a5e-3b7d-4e0a-9c51-2d8e4f7a9b13', ?, ?)",
                    [_ts(built_at), len(PERPLEXITY) + 1, len(PERPLEXITY)])
        # what `predictabase.warehouse.publish` adds to every snapshot: its own id
        con.execute("CREATE TABLE snapshot_info AS SELECT ? AS snapshot_id, ?::TIMESTAMPTZ AS published_at, "
                    "'6f1c2a5e-3b7d-4e0a-9c51-2d8e4f7a9b13' AS dbt_invocation_id, 5 AS n_marts, "
                    "false AS allowed_shrink", [snapshot_id or uuid.uuid4().hex, _ts(built_at)])
        con.execute("CHECKPOINT")
    finally:
        con.close()
    os.replace(tmp, path)
    return path


def expected_token_perplexity(model_key: str, corpus: str, scale: float = 1.0) -> float:
    """The token perplexity of a fixture row."""
    for key, c, *_rest, mean, _se in PERPLEXITY:
        if (key, c) == (model_key, corpus):
            return math.exp(mean * scale)
    raise KeyError((model_key, corpus))


# mart_delta_loglik (the columns the "Reading times" page reads): corpus, measure, model_key, model_name, family,
# parameters, ΔLL (nats per word), its 95% interval, permutation p; method cv_means, both definitions (WT = LW + 0.001)
DELTA_LOGLIK = [
    ("natural_stories", "spr", "gpt2", "GPT-2 small", "GPT-2", 124_000_000, 0.0112, 0.0071, 0.0153, 0.002),
    ("natural_stories", "spr", "smollm2-135m", "SmolLM2-135M", "SmolLM2", 135_000_000, 0.0097, 0.0050, 0.0144, 0.004),
    ("provo", "gaze_duration", "gpt2", "GPT-2 small", "GPT-2", 124_000_000, 0.0231, 0.0150, 0.0312, 0.002),
    ("provo", "gaze_duration", "smollm2-135m", "SmolLM2-135M", "SmolLM2", 135_000_000, 0.0188, 0.0101, 0.0275, 0.002),
    ("provo", "first_fixation", "gpt2", "GPT-2 small", "GPT-2", 124_000_000, 0.0042, -0.0011, 0.0095, 0.12),
    ("provo", "first_fixation", "smollm2-135m", "SmolLM2-135M", "SmolLM2", 135_000_000, 0.0035, -0.0020, 0.0090, 0.2),
]


def add_reading_marts(path: Path) -> Path:
    """Add mart_delta_loglik to the snapshot at `path` (the page's other reading marts stay absent: it says so)."""
    con = duckdb.connect(str(path))
    try:
        con.execute("""CREATE TABLE mart_delta_loglik (corpus VARCHAR, measure VARCHAR, model_key VARCHAR,
            model_name VARCHAR, model_family VARCHAR, n_parameters BIGINT, run_id VARCHAR, run_source VARCHAR,
            definition VARCHAR, method VARCHAR, status VARCHAR, n_words BIGINT, n_rows BIGINT,
            delta_loglik_nats_per_row DOUBLE, delta_loglik_ci_low_nats_per_row DOUBLE,
            delta_loglik_ci_high_nats_per_row DOUBLE, p_value DOUBLE)""")
        for corpus, measure, key, name, family, size, dll, lo, hi, p in DELTA_LOGLIK:
            for definition, shift in (("lw", 0.0), ("wt", 0.001)):
                con.execute("INSERT INTO mart_delta_loglik VALUES (?, ?, ?, ?, ?, ?, ?, 'scored', ?, 'cv_means', 'ok', "
                            "1000, 1000, ?, ?, ?, ?)", [corpus, measure, key, name, family, size, f"{key}@{corpus}",
                                                        definition, dll + shift, lo + shift, hi + shift, p])
        con.execute("CHECKPOINT")
    finally:
        con.close()
    return path
