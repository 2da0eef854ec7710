"""A small but realistic marts snapshot for the dashboard tests.

Same tables and columns as the marts `predictabase build` publishes into
`warehouse/marts.duckdb` (schema `main`). The numbers are consistent with each
other (perplexity = exp(mean surprisal), bits = nats / ln 2, ...), so a page that
showed the wrong column would show a visibly wrong value. Written like the real
publish: to a temporary file, then `os.replace`.
"""

from __future__ import annotations

import math
import os
import uuid
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import yaml

LN2 = math.log(2)
MARTS_YAML = Path(__file__).resolve().parent.parent / "dbt_project" / "models" / "marts"
SNAPSHOT_META = ("snapshot_info", "snapshot_marts", "snapshot_columns", "source_freshness")


def dbt_column_meta() -> dict[tuple[str, str], dict]:
    """(mart, column) -> {"label", "format", "description"} as dbt's YAML gives them: the label and format of the
    column's `config: {meta: ...}`, and its description where it is plain text (dbt renders a `{{ doc() }}`)."""
    out = {}
    for path in sorted(MARTS_YAML.rglob("*.yml")):
        for model in (yaml.safe_load(path.read_text()) or {}).get("models") or []:
            for col in model.get("columns") or []:
                meta = (col.get("config") or {}).get("meta") or {}
                desc = col.get("description")
                out[(model["name"], col["name"])] = {
                    "label": meta.get("label"),
                    "format": meta.get("format"),
                    "description": desc.strip() if isinstance(desc, str) and "{{" not in desc else None,
                }
    return out


def describe_columns(con: duckdb.DuckDBPyConnection) -> None:
    """(Re)write `snapshot_columns` as publish does: every table of the snapshot but its metadata, each column with
    its type and the description, label and format dbt's YAML gives it."""
    meta = dbt_column_meta()
    con.execute(
        "CREATE OR REPLACE TABLE snapshot_columns (mart VARCHAR, column_name VARCHAR, data_type VARCHAR, "
        "description VARCHAR, ordinal INTEGER, label VARCHAR, format VARCHAR)"
    )
    tables = [
        r[0]
        for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' ORDER BY 1"
        ).fetchall()
        if r[0] not in SNAPSHOT_META
    ]
    for table in tables:
        for i, (name, dtype, *_) in enumerate(con.execute(f'DESCRIBE "{table}"').fetchall(), 1):
            m = meta.get((table, name), {})
            con.execute(
                "INSERT INTO snapshot_columns VALUES (?, ?, ?, ?, ?, ?, ?)",
                [table, name, dtype, m.get("description"), i, m.get("label"), m.get("format")],
            )


SOURCES = [
    # dataset, repo, commit, license, n_files, total_bytes
    ("lm_game", "bshlgrs/lm-game", "f3ba57f5182df8b56877371efae561b863a69f21", "none stated", 40, 231_504),
    (
        "natural_stories",
        "languageMIT/naturalstories",
        "4700daad696e942f5aba23c957a7423d0de66612",
        "CC BY-NC-SA 4.0",
        1,
        58_721,
    ),
    (
        "provo",
        "martin-vasilev/Provo_corpus",
        "736e69b1e5a0444ceb81787b789a0e375c063b89",
        "none stated; Provo itself CC BY 4.0",
        1,
        1_733_456,
    ),
    (
        "ucl",
        "Andrea-de-Varda/prediction-resource",
        "7162734da00a9a3c81d5ebaec65bdf6d59e931fc",
        "none stated",
        2,
        402_331,
    ),
]

# model_key, model_id, revision, tokenizer, vocab, source
MODELS = {
    "smollm2-135m": (
        "HuggingFaceTB/SmolLM2-135M",
        "93efa2f097d58c2a74874c7e644dbc9b0cee75a2",
        "GPT2TokenizerFast",
        49152,
        "scored",
    ),
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
    return datetime.fromisoformat(s).replace(tzinfo=UTC)


def create_marts(
    path: Path, *, built_at: str = "2025-11-23 09:41:07", scale: float = 1.0, snapshot_id: str | None = None
) -> Path:
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
            con.execute(
                "INSERT INTO mart_sources VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?)",
                [ds, repo, commit, lic, f"citation for {ds}", n, size, n, True, _ts("2025-11-23 09:12:44")],
            )

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
            run_id = f"{(0x5A17C0DE + 7919 * i):08x}{(0x9E3779B1 * (i + 1)) % 2**32:08x}"
            scored = source == "scored"
            con.execute(
                "INSERT INTO mart_models VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                "?, ?, ?, ?, ?, ?)",
                [
                    run_id,
                    key,
                    model_id,
                    rev,
                    tok,
                    "float32" if scored else None,
                    "cpu" if scored else None,
                    "prepend" if scored else "none",
                    "<|endoftext|>" if scored else None,
                    corpus,
                    1024 if scored else None,
                    512 if scored else None,
                    10 if scored else None,
                    docs,
                    toks,
                    source,
                    _ts("2025-11-23 09:30:00"),
                    True,
                    vocab,
                    "tokenizer" if scored else "gpt2 BPE",
                    None,
                    False,
                    _ts("2025-11-23 09:25:00"),
                    _ts(built_at),
                ],
            )
            mean *= scale
            total = mean * toks
            n_bytes = chars + chars // 200  # a few non-ASCII characters
            ppl = math.exp(mean)
            lo, hi = mean - 1.96 * se, mean + 1.96 * se
            con.execute(
                "INSERT INTO mart_model_perplexity VALUES (" + ", ".join(["?"] * 32) + ")",
                [
                    key,
                    corpus,
                    run_id,
                    model_id,
                    rev,
                    tok,
                    source,
                    vocab,
                    docs,
                    toks,
                    words,
                    chars,
                    n_bytes,
                    total,
                    total / LN2,
                    mean,
                    mean / LN2,
                    ppl,
                    math.exp(lo),
                    math.exp(hi),
                    lo,
                    hi,
                    2000,
                    total / LN2 / n_bytes,
                    lo * toks / LN2 / n_bytes,
                    hi * toks / LN2 / n_bytes,
                    total / LN2 / chars,
                    math.exp(total / words),
                    total / LN2 / words,
                    ppl / vocab,
                    _ts("2025-11-23 09:30:00"),
                    _ts(built_at),
                ],
            )
        # a scoring run that is not used by the marts (a --limit quick run)
        con.execute(
            "INSERT INTO mart_models VALUES ('0badc0ffee123456', 'smollm2-135m', "
            "'HuggingFaceTB/SmolLM2-135M', '93efa2f097d58c2a74874c7e644dbc9b0cee75a2', 'GPT2TokenizerFast', "
            "'float32', 'cpu', 'prepend', '<|endoftext|>', 'provo', 1024, 512, 10, 5, 287, 'scored', "
            "TIMESTAMPTZ '2025-11-23 09:20:00+00', false, 49152, 'tokenizer', 5, false, "
            "TIMESTAMPTZ '2025-11-23 09:19:00+00', ?)",
            [_ts(built_at)],
        )

        con.execute(
            "CREATE TABLE mart_warehouse_tables (table_name VARCHAR, layer VARCHAR, n_rows BIGINT, present BOOLEAN)"
        )
        con.executemany(
            "INSERT INTO mart_warehouse_tables VALUES (?, ?, ?, true)",
            [
                ("raw.documents", "raw", 310),
                ("raw.game_doc_tokens", "raw", 10_912),
                ("raw.imported_word_surprisal", "raw", 7_722),
                ("raw.source_files", "raw", 51),
                ("raw.words", "raw", 23_080),
                ("parquet token_scores (complete runs)", "parquet", 41_141),
                ("parquet _run.json (complete runs)", "parquet", len(PERPLEXITY) + 1),
                ("mart_model_perplexity", "mart", len(PERPLEXITY)),
            ],
        )
        con.execute(
            "CREATE TABLE mart_build_info (built_at TIMESTAMPTZ, dbt_version VARCHAR, duckdb_version VARCHAR, "
            "invocation_id VARCHAR, n_complete_runs BIGINT, n_runs_used_in_marts BIGINT)"
        )
        con.execute(
            "INSERT INTO mart_build_info VALUES (?, '1.11.2', 'v1.4.1', '6f1c2a5e-3b7d-4e0a-9c51-2d8e4f7a9b13', ?, ?)",
            [_ts(built_at), len(PERPLEXITY) + 1, len(PERPLEXITY)],
        )
        # what `predictabase.warehouse.publish` adds to every snapshot: its own id
        con.execute(
            "CREATE TABLE snapshot_info AS SELECT ? AS snapshot_id, ?::TIMESTAMPTZ AS published_at, "
            "'6f1c2a5e-3b7d-4e0a-9c51-2d8e4f7a9b13' AS dbt_invocation_id, 5 AS n_marts, "
            "false AS allowed_shrink",
            [snapshot_id or uuid.uuid4().hex, _ts(built_at)],
        )
        describe_columns(con)  # ... and its columns' descriptions, labels and formats
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
    (
        "natural_stories",
        "spr",
        "smollm2-135m",
        "SmolLM2-135M-Instruct (4-bit GGUF)",
        "SmolLM2",
        135_000_000,
        0.0097,
        0.0050,
        0.0144,
        0.004,
    ),
    ("provo", "gaze_duration", "gpt2", "GPT-2 small", "GPT-2", 124_000_000, 0.0231, 0.0150, 0.0312, 0.002),
    (
        "provo",
        "gaze_duration",
        "smollm2-135m",
        "SmolLM2-135M-Instruct (4-bit GGUF)",
        "SmolLM2",
        135_000_000,
        0.0188,
        0.0101,
        0.0275,
        0.002,
    ),
    ("provo", "first_fixation", "gpt2", "GPT-2 small", "GPT-2", 124_000_000, 0.0042, -0.0011, 0.0095, 0.12),
    (
        "provo",
        "first_fixation",
        "smollm2-135m",
        "SmolLM2-135M-Instruct (4-bit GGUF)",
        "SmolLM2",
        135_000_000,
        0.0035,
        -0.0020,
        0.0090,
        0.2,
    ),
]


#: mart_anticipation_delta_loglik of SmolLM2 on Natural Stories' self-paced reading: comparison, ΔLL, low, high
#: (nats per word; the values of the real run, 16 samples a word)
ANTICIPATION = [
    ("surprisal", 0.03214, 0.02508, 0.03920),
    ("first_token_added", 0.00039, -0.00072, 0.00150),
    ("mc_added", 0.00178, 0.00005, 0.00351),
    ("renyi_added", 0.00482, 0.00233, 0.00731),
    ("mc_vs_first_token", 0.00139, -0.00119, 0.00398),
    ("first_token_replaces", -0.03063, -0.03777, -0.02349),
    ("mc_replaces", -0.02139, -0.02892, -0.01386),
    ("renyi_replaces", -0.02104, -0.02889, -0.01319),
]


#: mart_temperature_delta_loglik of SmolLM2 on Natural Stories' self-paced reading: T, ΔLL, low, high, vs T = 1
#: (nats per word; the values of the real run), and the run's best T [bootstrap interval] and cross-validated gain
TEMPERATURE = [
    (0.5, 0.02969, 0.02268, 0.03671, -0.00245),
    (0.75, 0.03065, 0.02362, 0.03769, -0.00149),
    (1.0, 0.03214, 0.02508, 0.03920, 0.0),
    (1.25, 0.03438, 0.02715, 0.04161, 0.00223),
    (1.5, 0.03727, 0.02963, 0.04491, 0.00513),
    (2.0, 0.04221, 0.03342, 0.05099, 0.01006),
    (2.5, 0.04158, 0.03230, 0.05087, 0.00944),
    (3.0, 0.03758, 0.02848, 0.04667, 0.00544),
    (4.0, 0.03023, 0.02192, 0.03855, -0.00191),
    (5.0, 0.02585, 0.01812, 0.03359, -0.00629),
    (7.5, 0.02086, 0.01388, 0.02783, -0.01129),
    (10.0, 0.01878, 0.01214, 0.02541, -0.01337),
]
TEMPERATURE_BEST = (2.0, 2.0, 2.5, 0.00931, 0.00395, 0.01468)


def add_reading_marts(path: Path) -> Path:
    """Add mart_delta_loglik, mart_anticipation_delta_loglik and mart_temperature_delta_loglik (Natural Stories only)
    to the snapshot at `path` (the page's other reading marts stay absent: it says so)."""
    con = duckdb.connect(str(path))
    try:
        con.execute("""CREATE TABLE mart_delta_loglik (corpus VARCHAR, measure VARCHAR, model_key VARCHAR,
            model_name VARCHAR, model_family VARCHAR, n_parameters BIGINT, run_id VARCHAR, run_source VARCHAR,
            definition VARCHAR, method VARCHAR, status VARCHAR, n_words BIGINT, n_rows BIGINT,
            delta_loglik_nats_per_row DOUBLE, delta_loglik_ci_low_nats_per_row DOUBLE,
            delta_loglik_ci_high_nats_per_row DOUBLE, p_value DOUBLE)""")
        for corpus, measure, key, name, family, size, dll, lo, hi, p in DELTA_LOGLIK:
            for definition, shift in (("lw", 0.0), ("wt", 0.001)):
                con.execute(
                    "INSERT INTO mart_delta_loglik VALUES (?, ?, ?, ?, ?, ?, ?, 'scored', ?, 'cv_means', 'ok', "
                    "1000, 1000, ?, ?, ?, ?)",
                    [
                        corpus,
                        measure,
                        key,
                        name,
                        family,
                        size,
                        f"{key}@{corpus}",
                        definition,
                        dll + shift,
                        lo + shift,
                        hi + shift,
                        p,
                    ],
                )
        con.execute("""CREATE TABLE mart_anticipation_delta_loglik (corpus VARCHAR, measure VARCHAR,
            model_key VARCHAR, entropy_run_id VARCHAR, surprisal_run_id VARCHAR, definition VARCHAR,
            comparison VARCHAR, n_samples BIGINT, renyi_alpha DOUBLE, n_words BIGINT, n_folds BIGINT,
            fold_seed BIGINT, delta_loglik_nats_per_word DOUBLE, delta_loglik_se_nats_per_word DOUBLE,
            delta_loglik_ci_low_nats_per_word DOUBLE, delta_loglik_ci_high_nats_per_word DOUBLE, p_value DOUBLE,
            mean_first_token_entropy_nats DOUBLE, mean_mc_entropy_nats DOUBLE, mean_renyi_entropy_nats DOUBLE,
            share_mc_below_first_token DOUBLE, share_mc_below_first_token_word DOUBLE)""")
        for comparison, dll, lo, hi in ANTICIPATION:
            con.execute(
                "INSERT INTO mart_anticipation_delta_loglik VALUES ('natural_stories', 'spr', 'smollm2-135m', "
                "'e0e0e0e0e0e0e0e0', 'smollm2-135m@natural_stories', 'wt', ?, 16, 0.5, 9245, 10, 42, ?, ?, ?, ?, "
                "0.01, 3.23, 3.75, 6.80, 0.068, 0.065)",
                [comparison, dll, (hi - lo) / 3.92, lo, hi],
            )
        con.execute("""CREATE TABLE mart_temperature_delta_loglik (corpus VARCHAR, measure VARCHAR, model_key VARCHAR,
            temperature_run_id VARCHAR, definition VARCHAR, temperature DOUBLE, is_best BOOLEAN, n_words BIGINT,
            n_folds BIGINT, fold_seed BIGINT, delta_loglik_nats_per_word DOUBLE, delta_loglik_se_nats_per_word DOUBLE,
            delta_loglik_ci_low_nats_per_word DOUBLE, delta_loglik_ci_high_nats_per_word DOUBLE, p_value DOUBLE,
            vs_t1_delta_loglik_nats_per_word DOUBLE, vs_t1_delta_loglik_ci_low_nats_per_word DOUBLE,
            vs_t1_delta_loglik_ci_high_nats_per_word DOUBLE, vs_t1_p_value DOUBLE, best_temperature DOUBLE,
            best_temperature_ci_low DOUBLE, best_temperature_ci_high DOUBLE, cv_gain_nats_per_word DOUBLE,
            cv_gain_ci_low_nats_per_word DOUBLE, cv_gain_ci_high_nats_per_word DOUBLE,
            mean_word_surprisal_nats DOUBLE)""")
        best, b_lo, b_hi, gain, g_lo, g_hi = TEMPERATURE_BEST
        for t, dll, lo, hi, vs in TEMPERATURE:
            con.execute(
                "INSERT INTO mart_temperature_delta_loglik VALUES ('natural_stories', 'spr', 'smollm2-135m', "
                "'t0t0t0t0t0t0t0t0', 'wt', ?, ?, 9245, 10, 42, ?, ?, ?, ?, 0.0001, ?, ?, ?, 0.01, ?, ?, ?, ?, ?, ?, 4.0)",
                [t, t == best, dll, (hi - lo) / 3.92, lo, hi, vs, vs - 0.005, vs + 0.005, best, b_lo, b_hi, gain, g_lo,
                 g_hi],
            )  # fmt: skip
        describe_columns(con)
        con.execute("CHECKPOINT")
    finally:
        con.close()
    return path


# ------------------------------------------------------------------ a user's corpus (`predictabase corpus add`)
USER_CORPUS = "brown"
USER_TITLE = "Brown (Smith & Levy 2013)"
# mart_corpora: corpus, title, origin, is_game, has_word_analyses, n_texts, n_words, reading measures, n_cloze_words
CORPORA = [
    ("lm_game", "LM game", "shipped", True, False, 40, 8_204, [], 0),
    ("natural_stories", "Natural Stories", "shipped", False, True, 10, 10_256, ["spr"], 0),
    ("provo", "Provo", "shipped", False, True, 55, 2_689, ["first_fixation", "gaze_duration"], 2_689),
    ("ucl", "UCL", "shipped", False, True, 205, 1_931, ["first_fixation", "gaze_duration", "spr"], 1_931),
    (USER_CORPUS, USER_TITLE, "user", False, True, 2, 12, ["spr"], 0),
]
# the user corpus's texts: doc_id -> words
USER_TEXTS = {
    "1": ["The", "horse", "raced", "past", "the", "barn", "fell."],
    "2": ["Colorless", "green", "ideas", "sleep", "furiously."],
}
# its scored runs: model_key, model_id, run_id, a shift of every surprisal (bits)
USER_RUNS = [
    ("smollm2-135m", "HuggingFaceTB/SmolLM2-135M", "b0b0b0b0b0b0b0b0", 0.0),
    ("gpt2", "openai-community/gpt2", "b1b1b1b1b1b1b1b1", 1.5),
]


def user_corpus_words() -> list[dict]:
    """One dict per (word, run) of the user corpus: what mart_words_export and mart_word_surprisal hold.
    LW = 2 + word length / 2 + the run's shift (bits); WT = LW + 1.25 on a sentence's last word, LW - 0.25 else."""
    rows = []
    for key, model_id, run_id, shift in USER_RUNS:
        for doc, words in USER_TEXTS.items():
            for i, word in enumerate(words):
                lw = 2 + len(word) / 2 + shift
                wt = lw + (1.25 if i == len(words) - 1 else -0.25)
                rows.append(
                    {
                        "corpus": USER_CORPUS,
                        "doc_id": doc,
                        "word_index": i,
                        "word": word,
                        "model_key": key,
                        "model_id": model_id,
                        "run_id": run_id,
                        "native_word_id": f"{doc}.{i + 1}",
                        "surprisal_lw_bits": lw,
                        "surprisal_wt_bits": wt,
                        "n_tokens": 1 + len(word) // 6,
                        "mean_rt_spr_ms": 300.0 + 10 * len(word),
                    }
                )
    return rows


def add_user_corpus(path: Path) -> Path:
    """Add a user's corpus (brown, titled USER_TITLE) to the snapshot at `path` (written by `create_marts`, with or
    without `add_reading_marts`): mart_corpora, its perplexity and reading-time rows, the word-surprisal marts of
    two scored runs on it, and mart_words_export."""
    con = duckdb.connect(str(path))
    try:
        con.execute("""CREATE TABLE mart_corpora (corpus VARCHAR, title VARCHAR, origin VARCHAR, is_game BOOLEAN,
            has_word_analyses BOOLEAN, published VARCHAR, declared_at TIMESTAMPTZ, n_texts BIGINT, n_words BIGINT,
            reading_measures VARCHAR[], has_reading_times BOOLEAN, has_cloze BOOLEAN, n_cloze_words BIGINT,
            frequency_source VARCHAR, n_runs BIGINT)""")
        for corpus, title, origin, game, words_ok, n_texts, n_words, measures, n_cloze in CORPORA:
            user = origin == "user"
            con.execute(
                "INSERT INTO mart_corpora VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)",
                [
                    corpus,
                    title,
                    origin,
                    game,
                    words_ok,
                    "pimentel_meister:brown" if user else None,
                    _ts("2025-11-23 08:00:00") if user else None,
                    n_texts,
                    n_words,
                    measures,
                    bool(measures),
                    n_cloze > 0,
                    n_cloze,
                    ("user" if user else "wordfreq") if words_ok else None,
                ],
            )
        # perplexity: SmolLM2 on the user corpus, with Provo's numbers
        con.execute(
            "INSERT INTO mart_model_perplexity SELECT * REPLACE (? AS corpus, ? AS run_id) "
            "FROM mart_model_perplexity WHERE model_key = 'smollm2-135m' AND corpus = 'provo'",
            [USER_CORPUS, USER_RUNS[0][2]],
        )
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        if "mart_delta_loglik" in tables:  # self-paced reading times, both runs
            con.execute(
                "INSERT INTO mart_delta_loglik SELECT * REPLACE (? AS corpus, model_key || '@' || ? AS run_id) "
                "FROM mart_delta_loglik WHERE corpus = 'natural_stories'",
                [USER_CORPUS, USER_CORPUS],
            )

        rows = user_corpus_words()
        con.execute("""CREATE TABLE mart_word_surprisal (corpus VARCHAR, model_key VARCHAR, model_id VARCHAR,
            run_id VARCHAR, run_source VARCHAR, definitions VARCHAR, used_in_marts BOOLEAN, end_of_text_tokens VARCHAR,
            doc_id VARCHAR, word_index INTEGER, word_id VARCHAR, native_word_id VARCHAR, word VARCHAR,
            is_first_word BOOLEAN, is_last_word BOOLEAN, n_tokens BIGINT, is_multitoken BOOLEAN, is_aligned BOOLEAN,
            surprisal_lw_nats DOUBLE, surprisal_lw_bits DOUBLE, surprisal_wt_nats DOUBLE, surprisal_wt_bits DOUBLE,
            surprisal_wt_minus_lw_bits DOUBLE, logprob_boundary_before_nats DOUBLE,
            logprob_boundary_after_nats DOUBLE)""")
        con.execute("""CREATE TABLE mart_words_export (corpus VARCHAR, corpus_title VARCHAR, doc_id VARCHAR,
            word_index INTEGER, native_word_id VARCHAR, word VARCHAR, model_key VARCHAR, model_id VARCHAR,
            model_revision VARCHAR, run_id VARCHAR, run_source VARCHAR, context_length BIGINT, stride BIGINT,
            dtype VARCHAR, bos_policy VARCHAR, surprisal_lw_nats DOUBLE, surprisal_lw_bits DOUBLE,
            surprisal_wt_nats DOUBLE, surprisal_wt_bits DOUBLE, logprob_boundary_before_nats DOUBLE,
            logprob_boundary_after_nats DOUBLE, length_chars BIGINT, zipf_frequency DOUBLE, frequency_source VARCHAR,
            mean_rt_spr_ms DOUBLE, mean_rt_first_fixation_ms DOUBLE, mean_rt_gaze_duration_ms DOUBLE,
            mean_rt_go_past_ms DOUBLE, mean_rt_total_reading_time_ms DOUBLE, cloze_probability DOUBLE,
            cloze_surprisal_nats DOUBLE)""")
        for r in rows:
            lw, wt = r["surprisal_lw_bits"], r["surprisal_wt_bits"]
            last = r["word_index"] == len(USER_TEXTS[r["doc_id"]]) - 1
            before, after = -0.1, (-1.0 if last else -0.2)
            con.execute(
                "INSERT INTO mart_word_surprisal VALUES (?, ?, ?, ?, 'scored', 'LW and WT', true, "
                "'<|endoftext|>', ?, ?, ?, ?, ?, ?, ?, ?, ?, true, ?, ?, ?, ?, ?, ?, ?)",
                [
                    USER_CORPUS,
                    r["model_key"],
                    r["model_id"],
                    r["run_id"],
                    r["doc_id"],
                    r["word_index"],
                    f"{r['doc_id']}:{r['word_index']}",
                    r["native_word_id"],
                    r["word"],
                    r["word_index"] == 0,
                    last,
                    r["n_tokens"],
                    r["n_tokens"] > 1,
                    lw * LN2,
                    lw,
                    wt * LN2,
                    wt,
                    wt - lw,
                    before,
                    after,
                ],
            )
            con.execute(
                "INSERT INTO mart_words_export VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'main', ?, 'scored', 1024, 512, "
                "'float32', 'prepend', ?, ?, ?, ?, ?, ?, ?, ?, 'user', ?, NULL, NULL, NULL, NULL, NULL, NULL)",
                [
                    USER_CORPUS,
                    USER_TITLE,
                    r["doc_id"],
                    r["word_index"],
                    r["native_word_id"],
                    r["word"],
                    r["model_key"],
                    r["model_id"],
                    r["run_id"],
                    lw * LN2,
                    lw,
                    wt * LN2,
                    wt,
                    before,
                    after,
                    len(r["word"]),
                    7.0 - len(r["word"]) / 3,
                    r["mean_rt_spr_ms"],
                ],
            )
        con.execute("""CREATE TABLE mart_word_surprisal_summary AS
            SELECT corpus, model_key, any_value(model_id) AS model_id, run_id, 'scored' AS run_source,
                'LW and WT' AS definitions, '<|endoftext|>' AS end_of_text_tokens, count(*) AS n_words,
                count(*) AS n_aligned_words, 0::BIGINT AS n_unaligned_words, count(surprisal_wt_bits) AS n_words_with_wt,
                avg((n_tokens > 1)::INTEGER) AS share_multitoken, avg(surprisal_lw_bits) AS mean_surprisal_lw_bits,
                avg(surprisal_wt_bits) AS mean_surprisal_wt_bits, avg(surprisal_wt_minus_lw_bits) AS mean_wt_minus_lw_bits,
                avg(abs(surprisal_wt_minus_lw_bits)) AS mean_abs_wt_minus_lw_bits,
                avg((abs(surprisal_wt_minus_lw_bits) > 1)::INTEGER) AS share_moved_over_1_bit,
                string_agg(word, ', ' ORDER BY abs(surprisal_wt_minus_lw_bits) DESC, doc_id, word_index)
                    FILTER (WHERE abs(surprisal_wt_minus_lw_bits) > 1) AS words_moving_most,
                1e-9 AS max_text_telescoping_error_nats
            FROM mart_word_surprisal GROUP BY corpus, model_key, run_id""")
        describe_columns(con)
        con.execute("CHECKPOINT")
    finally:
        con.close()
    return path
