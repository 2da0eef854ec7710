"""A small but real warehouse in the contract shape (docs/architecture.md), for the dbt tests.

Written without the scorer or the corpus ingest, from real upstream files of the mirror:

* natural_stories: the 10 stories as GPT-3 davinci saw them (`probs/all_stories_gpt3.csv`:
  real log-probabilities with character offsets), imported as run `gpt3-davinci` (first
  token of each story unscored: NULL logprob, as upstream);
* ucl: the 205 de Varda / Frank et al. sentences (`ucl_devarda/all_measures.csv`), scored by
  a fake model `test-lm` with seeded random log-probabilities over regex tokens, in several
  runs to exercise run selection: an older full run, the newest full run (used), a newer
  --limit run (never used), an incomplete run directory (no _run.json, ignored), and a
  model with only a --limit run (no mart row);
* lm_game: three short non-ASCII documents with `score_prefix_chars`, scored by `test-lm`
  on the prefix only (bytes != characters).

Words are maximal runs of non-whitespace characters (the lm_game rule), which is enough for
the tests: the dbt models only use their spans.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from predictabase.core.config import Paths
from predictabase.ingest.raw import connect, replace_partition
from predictabase.ingest.scoring import store

TOKEN_SCHEMA = store.SCHEMA  # the token-score Parquet schema, from the one place that defines it

LM_GAME_DOCS = [
    ("1001", "Le café était fermé, so we walked on — past the “old” bakery and into the rain. Nobody spoke.", 60),
    ("1002", "Über den Wolken: naïve pilots, résumés and smörgåsbord — a strange mixture of words indeed!", 45),
    ("1003", "The year was 1903; the Wright brothers flew at Kitty Hawk. Everyone was amazed… or not.", 50),
]


@dataclass
class Fixture:
    paths: Paths
    # run_id -> path of the run directory, for every run written
    run_dirs: dict[str, Path] = field(default_factory=dict)
    # (model_key, corpus) -> run_id the marts must use
    expected_runs: dict[tuple[str, str], str] = field(default_factory=dict)
    # runs that must not feed the marts
    unused_runs: set[str] = field(default_factory=set)
    incomplete_runs: set[str] = field(default_factory=set)


def whitespace_words(corpus: str, doc_id: str, text: str) -> list[dict]:
    return [
        dict(
            corpus=corpus,
            doc_id=doc_id,
            word_index=i,
            word=m.group(),
            char_start=m.start(),
            char_end=m.end(),
            native_id=str(i + 1),
            source_path="fixture",
            source_sha256="0" * 64,
        )
        for i, m in enumerate(re.finditer(r"\S+", text))
    ]


def regex_tokens(text: str, end: int | None = None) -> list[tuple[int, int]]:
    """Spans tiling text[:end]: optional leading whitespace + a word or a punctuation run."""
    end = len(text) if end is None else end
    spans = [(m.start(), m.end()) for m in re.finditer(r"\s*(?:\w+|[^\w\s]+)|\s+$", text[:end])]
    assert spans and spans[0][0] == 0 and spans[-1][1] == end
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    return spans


def token_rows(run_id: str, model_key: str, corpus: str, doc_id: str, text: str, spans, logprobs) -> list[dict]:
    rows = []
    for i, ((s, e), lp) in enumerate(zip(spans, logprobs)):
        piece = text[s:e]
        rows.append(
            dict(
                run_id=run_id,
                model_key=model_key,
                corpus=corpus,
                doc_id=doc_id,
                token_index=i,
                token_id=None,
                token=piece.replace(" ", "Ġ"),
                token_text=piece,
                char_start=s,
                char_end=e,
                logprob_nats=None if lp is None else float(lp),
                rank=None,
                entropy_nats=None,
                topk_token_ids=None,
                topk_tokens=None,
                topk_logprobs_nats=None,
                logprob_word_initial_nats=None,
                context_tokens=i,
            )
        )
    return rows


def write_run(
    fx: Fixture,
    run_id: str,
    model_key: str,
    corpus: str,
    rows: list[dict],
    meta: dict | None,
    drop_columns: tuple[str, ...] = (),
    n_parts: int = 2,
) -> Path:
    """Write a run directory: part files of whole documents, then `_run.json` unless meta is None."""
    run_dir = fx.paths.token_scores / f"model={model_key}" / f"corpus={corpus}" / f"run={run_id}"
    run_dir.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(rows, schema=TOKEN_SCHEMA)
    for c in drop_columns:
        table = table.drop_columns([c])
    docs = sorted(set(table.column("doc_id").to_pylist()))
    for part in range(n_parts):
        mine = [d for j, d in enumerate(docs) if j % n_parts == part]
        mask = pc.is_in(table.column("doc_id"), pa.array(mine))
        pq.write_table(table.filter(mask), run_dir / f"part-{part:05d}.parquet")
    if meta is not None:
        doc_ids = {r["doc_id"] for r in rows}
        base = dict(
            run_id=run_id,
            model_key=model_key,
            model_id=f"fixture/{model_key}",
            model_revision="0" * 40,
            tokenizer="regex-fixture",
            tokenizer_sha256="0" * 64,
            vocab_size=50257,
            dtype="float32",
            device="cpu",
            bos_policy="prepend",
            bos_token_id=50256,
            bos_token="<|endoftext|>",
            corpus=corpus,
            corpus_version="f" * 64,
            context_length=1024,
            stride=512,
            top_k=10,
            batch_tokens=8192,
            limit=None,
            full=False,
            n_docs=len(doc_ids),
            n_tokens=len(rows),
            source="scored",
            started_at="2024-01-01T00:00:00+00:00",
            finished_at="2024-01-01T00:10:00+00:00",
            package_versions={"fixture": "1"},
        )
        base.update(meta)
        (run_dir / "_run.json").write_text(json.dumps(base, indent=1))
    fx.run_dirs[run_id] = run_dir
    return run_dir


def build_fixture(paths: Paths, mirror: Path) -> Fixture:
    fx = Fixture(paths)
    paths.token_scores.mkdir(parents=True, exist_ok=True)

    # -- raw.source_files: the real catalog rows, as `predictabase fetch` records them
    from predictabase.ingest.raw import now_utc
    from predictabase.ingest.sources.catalog import load_catalog

    when = now_utc()
    source_files = pl.DataFrame(
        [
            dict(
                path=f.path,
                dataset=f.dataset,
                repo=f.repo.repo,
                commit=f.repo.commit,
                upstream_path=f.upstream_path,
                url=f.url,
                license=f.repo.license,
                citation=f.repo.citation,
                sha256=f.sha256,
                bytes=f.bytes,
                status="verified",
                origin="mirror",
                fetched_at=when,
            )
            for f in load_catalog()
        ]
    )

    # -- natural_stories from the real GPT-3 davinci token file
    gpt3 = pl.read_csv(mirror / "natural_stories" / "probs" / "all_stories_gpt3.csv", infer_schema_length=0)
    gpt3 = gpt3.with_columns(
        pl.col("offset").cast(pl.Int64), pl.col("logprob").cast(pl.Float64), pl.col("story").cast(pl.Int64)
    )
    documents, words, gpt3_rows = [], [], []
    for story, g in gpt3.group_by("story", maintain_order=True):
        story = story[0]
        doc_id = str(story + 1)
        text = "".join(g["token"].to_list())
        spans = [(o, o + len(t)) for o, t in zip(g["offset"], g["token"])]
        documents.append(
            dict(corpus="natural_stories", doc_id=doc_id, doc_index=story, text=text, score_prefix_chars=None)
        )
        words += whitespace_words("natural_stories", doc_id, text)
        gpt3_rows += token_rows(
            "gpt3run00000001", "gpt3-davinci", "natural_stories", doc_id, text, spans, g["logprob"].to_list()
        )
    write_run(
        fx,
        "gpt3run00000001",
        "gpt3-davinci",
        "natural_stories",
        gpt3_rows,
        dict(
            model_id="davinci:2020-05-03",
            model_revision="davinci:2020-05-03",
            tokenizer="gpt2 (GPT-3 API)",
            tokenizer_sha256=None,
            vocab_size=None,
            dtype=None,
            device="openai-api",
            bos_policy="none",
            bos_token_id=None,
            bos_token=None,
            context_length=2049,
            stride=None,
            top_k=None,
            batch_tokens=None,
            source="imported",
            finished_at="2021-02-26T16:52:25+00:00",
        ),
        drop_columns=("context_tokens",),
    )  # exercises union_by_name across part files
    fx.expected_runs[("gpt3-davinci", "natural_stories")] = "gpt3run00000001"

    # -- ucl sentences, scored by a fake model in several runs
    ucl = (
        pl.read_csv(mirror / "ucl_devarda" / "all_measures.csv", columns=["sent_id", "sentence"], infer_schema_length=0)
        .unique("sent_id")
        .with_columns(pl.col("sent_id").cast(pl.Int64))
        .sort("sent_id")
    )
    ucl_docs = list(zip(ucl["sent_id"].cast(pl.Utf8), ucl["sentence"]))
    for i, (doc_id, text) in enumerate(ucl_docs):
        documents.append(dict(corpus="ucl", doc_id=doc_id, doc_index=i, text=text, score_prefix_chars=None))
        words += whitespace_words("ucl", doc_id, text)

    def ucl_run(run_id: str, model_key: str, seed: int, docs, meta: dict | None) -> None:
        rng = np.random.default_rng(seed)
        rows = []
        for doc_id, text in docs:
            spans = regex_tokens(text)
            rows += token_rows(run_id, model_key, "ucl", doc_id, text, spans, -rng.gamma(2.0, 1.5, len(spans)))
        write_run(fx, run_id, model_key, "ucl", rows, meta)

    ucl_run("uclold0000000001", "test-lm", 1, ucl_docs, dict(finished_at="2024-01-01T00:00:00Z"))
    ucl_run("uclnew0000000002", "test-lm", 2, ucl_docs, dict(finished_at="2024-02-01T00:00:00Z"))
    ucl_run("ucllim0000000003", "test-lm", 3, ucl_docs[:5], dict(limit=5, finished_at="2024-03-01T00:00:00Z"))
    ucl_run("uclinc0000000004", "test-lm", 4, ucl_docs[:7], None)  # incomplete: no _run.json
    ucl_run("onlylim000000005", "only-limited", 5, ucl_docs[:10], dict(limit=10))
    fx.expected_runs[("test-lm", "ucl")] = "uclnew0000000002"
    fx.unused_runs |= {"uclold0000000001", "ucllim0000000003", "onlylim000000005"}
    fx.incomplete_runs.add("uclinc0000000004")

    # -- lm_game: non-ASCII documents scored on their prefix only
    rng = np.random.default_rng(7)
    game_rows = []
    for i, (doc_id, text, nominal) in enumerate(LM_GAME_DOCS):
        prefix = next(e for _, e in regex_tokens(text) if e >= nominal)  # ends on a token boundary
        documents.append(dict(corpus="lm_game", doc_id=doc_id, doc_index=i, text=text, score_prefix_chars=prefix))
        words += whitespace_words("lm_game", doc_id, text)
        spans = regex_tokens(text, prefix)
        game_rows += token_rows(
            "game000000000006", "test-lm", "lm_game", doc_id, text, spans, -rng.gamma(2.0, 1.5, len(spans))
        )
    write_run(fx, "game000000000006", "test-lm", "lm_game", game_rows, dict(finished_at="2024-02-02T00:00:00Z"))
    fx.expected_runs[("test-lm", "lm_game")] = "game000000000006"

    docs = pl.DataFrame(documents, schema_overrides={"score_prefix_chars": pl.Int32}).with_columns(
        n_chars=pl.col("text").str.len_chars(),
        n_bytes=pl.col("text").str.len_bytes(),
        corpus_version=pl.lit("f" * 64),
        source_path=pl.lit("fixture"),
        source_sha256=pl.lit("0" * 64),
    )
    words_df = pl.DataFrame(words)
    with connect(paths) as con:
        replace_partition(con, "raw.source_files", source_files, {})
        for corpus in docs["corpus"].unique().to_list():
            replace_partition(con, "raw.documents", docs.filter(pl.col("corpus") == corpus), {"corpus": corpus})
            replace_partition(con, "raw.words", words_df.filter(pl.col("corpus") == corpus), {"corpus": corpus})
    return fx


def expected_metrics(fx: Fixture, run_id: str) -> dict:
    """Independent (polars/numpy) computation of a run's corpus-level metrics from its Parquet."""
    tokens = pl.read_parquet(fx.run_dirs[run_id] / "part-*.parquet").filter(pl.col("logprob_nats").is_not_null())
    corpus = tokens["corpus"][0]
    with connect(fx.paths, read_only=True) as con:
        words = pl.DataFrame(
            con.execute("SELECT doc_id, char_end FROM raw.words WHERE corpus = ?", [corpus]).fetchall(),
            schema=["doc_id", "char_end"],
            orient="row",
        )
    n_words = 0
    for (doc_id,), g in tokens.group_by("doc_id"):
        ends = words.filter(pl.col("doc_id") == doc_id)["char_end"].to_numpy()
        s, e = g["char_start"].to_numpy(), g["char_end"].to_numpy()
        n_words += sum(int(((ends > a) & (ends <= b)).sum()) for a, b in zip(s, e))
    nats = -tokens["logprob_nats"].sum()
    bits = nats / np.log(2)
    n_tokens = tokens.height
    n_chars = int((tokens["char_end"] - tokens["char_start"]).sum())
    n_bytes = int(tokens["token_text"].str.len_bytes().sum())
    per_doc = tokens.group_by("doc_id").agg(nats=-pl.col("logprob_nats").sum(), n=pl.len()).sort("doc_id")
    return dict(
        n_docs=per_doc.height,
        n_tokens=n_tokens,
        n_chars=n_chars,
        n_bytes=n_bytes,
        n_words=n_words,
        total_surprisal_nats=nats,
        token_perplexity=float(np.exp(nats / n_tokens)),
        bits_per_byte=bits / n_bytes,
        bits_per_char=bits / n_chars,
        word_perplexity=float(np.exp(nats / n_words)),
        bits_per_word=bits / n_words,
        doc_nats=per_doc["nats"].to_numpy(),
        doc_tokens=per_doc["n"].to_numpy(),
    )


def numpy_bootstrap(doc_nats: np.ndarray, doc_tokens: np.ndarray, b: int = 4000, seed: int = 0) -> tuple[float, float]:
    """Percentile 95% interval of exp(sum nats / sum tokens) over documents resampled with replacement."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(doc_nats), size=(b, len(doc_nats)))
    ppl = np.exp(doc_nats[idx].sum(axis=1) / doc_tokens[idx].sum(axis=1))
    return float(np.quantile(ppl, 0.025)), float(np.quantile(ppl, 0.975))
