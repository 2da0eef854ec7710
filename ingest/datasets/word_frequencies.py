"""Word frequency of every corpus word -> raw.word_frequencies, frequency_source 'wordfreq' (one row per raw.words row).

wordfreq (Speer, rspeer/wordfreq; its version is recorded in every row), in each corpus's language (declared:
ingest/corpora.toml, `corpus add --language`; the shipped corpora are English), wordlist 'large' where wordfreq
has one for the language, else 'best' (wordfreq_language and wordfreq_wordlist say which, per row).
- lookup_form = wordfreq's own tokenization of the corpus word (`wordfreq.lossy_tokenize(word, 'en')`,
  the tokens `word_frequency` looks up), tokens joined by one space: lowercased, surrounding
  punctuation stripped ("England," -> england, '"Hello' -> hello). Apostrophes inside a word stay
  ("don't", "o'brien" are one token of the wordlist); hyphens and other inner punctuation split
  ("well-known" -> "well known"). n_lookup_tokens counts them.
- wordfreq_frequency = `wordfreq.word_frequency(word, 'en', 'large')`: per word of running text. For a
  multi-token word it is wordfreq's own combination 1/f = 1/f1 + 1/f2 + ... (its documented rule for
  text that tokenizes into several words); a token missing from the list gives 0 (wordfreq's default
  minimum). zipf_frequency = `wordfreq.zipf_frequency(...)` = log10(frequency per billion words),
  rounded by wordfreq to 2 decimals; 0 where the frequency is 0.
- A word with no word characters (a dash, "--") has no tokens: lookup_form, n_lookup_tokens and both
  frequencies are NULL (wordfreq would return 0; there is no word to look up).

Natural Stories' Google Books counts (natural_stories/freqs/freqs-1.tsv, headerless: token code,
n-gram order, token, count, context count) as a second column, per story word (doc_id = story,
native_id = position of the code `story.position.kind`, the .tok zone):
- google_books_count = the count of the `.word` code: the word without its attached punctuation,
  PTB-tokenized ("England," -> England; "wasn't" -> "was n't", the bigram's count). For the 10 words
  "Mr." / "Dr." the file has no `.word` code and the `.whole` code (the one token "Mr.") is used.
  google_books_token is the token string counted. Counts sum Google Books English from 1990 on
  (freqs/README.md). NULL for the other corpora.
Every story word must have a code in the file (else IngestError listing them).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
from pathlib import Path

import polars as pl

from predictabase.core.config import Paths
from predictabase.core.errors import IngestError
from predictabase.ingest import corpus_table
from predictabase.ingest.datasets._common import WORD_FREQUENCIES_SCHEMA, CorpusLoad
from predictabase.ingest.datasets.corpora import corpus_frames
from predictabase.ingest.sources import readers
from predictabase.ingest.sources.definitions import dataset

NAME = "word_frequencies"
TABLE = "word_frequencies"
CORPORA = list(corpus_table.SCORED)  # the shipped corpora; a warehouse's user corpora are added by `corpora`
LANGUAGE = "en"  # the shipped corpora's
WORDLIST = "large"  # wordfreq's largest list; 'best' for a language that has no large one
GOOGLE_BOOKS = dataset(NAME).file("google_books_unigrams")

SCHEMA = WORD_FREQUENCIES_SCHEMA  # raw.word_frequencies (ingest/datasets/_common.py: user corpora write it too)
SOURCE = "wordfreq"  # frequency_source of the rows this job writes (a user's own file: "user", declared_corpora)


def wordlist_of(language: str) -> str:
    """wordfreq's list for a language: 'large' where it has one, else 'small' (Greek, Korean, Turkish; IngestError:
    none at all)."""
    import wordfreq

    for wordlist in (WORDLIST, "small"):
        if language in wordfreq.available_languages(wordlist):
            return wordlist
    raise IngestError(
        NAME,
        f"wordfreq has no word list for language {language!r}; one of "
        f"{', '.join(sorted(wordfreq.available_languages('best')))}",
    )


def wordlist_file(language: str = LANGUAGE) -> tuple[str, str, str]:
    """(wordfreq version, the wordlist file as 'wordfreq==V:data/NAME', its sha256): the rows' provenance."""
    version = importlib.metadata.version("wordfreq")
    spec = importlib.util.find_spec("wordfreq")
    wordlist = wordlist_of(language)
    path = Path(spec.origin).parent / "data" / f"{wordlist}_{language}.msgpack.gz"
    if not path.exists():
        raise IngestError(NAME, f"wordfreq {version} has no {wordlist} wordlist for {language} ({path})")
    return version, f"wordfreq=={version}:data/{path.name}", hashlib.sha256(path.read_bytes()).hexdigest()


def lookup(words: list[str], language: str = LANGUAGE) -> pl.DataFrame:
    """wordfreq's lookup form and frequencies of each distinct word, in its list for `language`."""
    import wordfreq

    wordlist = wordlist_of(language)
    out = {"word": [], "lookup_form": [], "n_lookup_tokens": [], "wordfreq_frequency": [], "zipf_frequency": []}
    for w in words:
        tokens = wordfreq.lossy_tokenize(w, language)
        out["word"].append(w)
        if tokens:
            out["lookup_form"].append(" ".join(tokens))
            out["n_lookup_tokens"].append(len(tokens))
            out["wordfreq_frequency"].append(wordfreq.word_frequency(w, language, wordlist))
            out["zipf_frequency"].append(wordfreq.zipf_frequency(w, language, wordlist))
        else:
            for k in ("lookup_form", "n_lookup_tokens", "wordfreq_frequency", "zipf_frequency"):
                out[k].append(None)
    return pl.DataFrame(
        out,
        schema={
            "word": pl.String,
            "lookup_form": pl.String,
            "n_lookup_tokens": pl.Int32,
            "wordfreq_frequency": pl.Float64,
            "zipf_frequency": pl.Float64,
        },
    )


def parse_google_books(data: bytes, name: str) -> pl.DataFrame:
    """freqs-1.tsv -> (doc_id, native_id, kind, code, token, count); every line checked."""
    text = readers.decode(data, name, GOOGLE_BOOKS.encoding)
    if not text.endswith("\n"):
        raise IngestError(name, "file does not end with a newline: truncated?")
    lines = pl.Series("line", text[:-1].split("\n"))
    parts = lines.str.split("\t")
    bad = parts.list.len() != 5
    if bad.any():
        k = int(bad.arg_true()[0])
        raise IngestError(name, f"line {k + 1}: {parts[k].len()} fields, expected 5")
    df = pl.DataFrame(
        {"code": parts.list.get(0), "order": parts.list.get(1), "token": parts.list.get(2), "count": parts.list.get(3)}
    )
    code = df["code"].str.extract_groups(r"^(\d+)\.(\d+)\.(whole|word|\d+)$")
    df = df.with_columns(
        doc_id=code.struct.field("1"),
        native_id=code.struct.field("2"),
        kind=code.struct.field("3"),
        count=pl.col("count").cast(pl.Int64, strict=False),
        line=pl.int_range(1, pl.len() + 1),
    )
    for col, what in (("kind", "token code story.position.{whole,word,N}"), ("count", "count (an integer)")):
        b = df.filter(pl.col(col).is_null())
        if b.height:
            raise IngestError(name, f"line {b['line'][0]}: no {what}")
    if (df["order"] != "1").any():
        raise IngestError(name, "not a unigram file (n-gram order other than 1)")
    if df["code"].n_unique() != df.height:
        raise IngestError(name, "a token code appears twice")
    return df


def google_books_counts(df: pl.DataFrame, words: pl.DataFrame, name: str) -> pl.DataFrame:
    """Per story word: the `.word` count, else the `.whole` count (the 'Mr.' / 'Dr.' words)."""
    word = df.filter(pl.col("kind") == "word").select(
        "doc_id",
        "native_id",
        pl.col("count").alias("c_word"),
        pl.col("token").alias("t_word"),
        pl.col("code").alias("k_word"),
    )
    whole = df.filter(pl.col("kind") == "whole").select(
        "doc_id",
        "native_id",
        pl.col("count").alias("c_whole"),
        pl.col("token").alias("t_whole"),
        pl.col("code").alias("k_whole"),
    )
    out = (
        words.select("doc_id", "native_id")
        .join(whole, on=["doc_id", "native_id"], how="left")
        .join(word, on=["doc_id", "native_id"], how="left")
    )
    missing = out.filter(pl.col("c_whole").is_null())
    if missing.height:
        ids = [f"{d}.{n}" for d, n in missing.select("doc_id", "native_id").head(5).iter_rows()]
        raise IngestError(name, f"{missing.height} Natural Stories word(s) have no token code: {', '.join(ids)}")
    return out.select(
        "doc_id",
        "native_id",
        pl.coalesce("c_word", "c_whole").alias("google_books_count"),
        pl.coalesce("t_word", "t_whole").alias("google_books_token"),
        pl.coalesce("k_word", "k_whole").alias("google_books_code"),
    )


def corpora(paths: Paths) -> list[str]:
    """The corpora whose words get a frequency: the shipped ones with texts and the warehouse's user corpora."""
    from predictabase.ingest.corpus_declarations import user_corpora

    return CORPORA + list(user_corpora(paths))


def _wordfreq_columns(words: pl.DataFrame, language: str) -> pl.DataFrame:
    """The words of the corpora in one language with wordfreq's frequencies and provenance."""
    version, wl_path, wl_sha = wordlist_file(language)
    freqs = lookup(words["word"].unique().sort().to_list(), language)
    return words.join(freqs, on="word", how="left").with_columns(
        wordfreq_language=pl.lit(language),
        wordfreq_wordlist=pl.lit(wordlist_of(language)),
        wordfreq_version=pl.lit(version),
        source_path=pl.lit(wl_path),
        source_sha256=pl.lit(wl_sha),
    )


def load(paths: Paths, prepared: dict | None = None) -> CorpusLoad:
    from predictabase.ingest.corpus_declarations import languages

    prepared = prepared or {}
    language = languages(paths)
    words = pl.concat(
        [
            corpus_frames(paths, prepared, c)[1]
            .select("corpus", "doc_id", "word_index", "native_id", "word")
            .with_columns(language=pl.lit(language[c]))
            for c in corpora(paths)
        ]
    )
    src = readers.source(GOOGLE_BOOKS, paths)
    ns_words = words.filter(pl.col("corpus") == "natural_stories")
    gb = google_books_counts(parse_google_books(src.data, src.path), ns_words, src.path)
    gb = gb.with_columns(
        corpus=pl.lit("natural_stories"),
        google_books_source_path=pl.lit(src.path),
        google_books_source_sha256=pl.lit(src.sha256),
    )
    table = (
        pl.concat(
            [
                _wordfreq_columns(group.drop("language"), lang)
                for (lang,), group in words.group_by("language", maintain_order=True)
            ]
        )
        .join(gb, on=["corpus", "doc_id", "native_id"], how="left")
        .with_columns(frequency_source=pl.lit(SOURCE))
        .select([pl.col(c).cast(t) for c, t in SCHEMA.items()])
        .sort("corpus", "doc_id", "word_index")
    )
    return CorpusLoad(NAME, [(f"raw.{TABLE}", table, {"frequency_source": SOURCE})], {})


def write(con, load: CorpusLoad) -> int:
    """Replace wordfreq's rows (every corpus's; a user's own frequencies, frequency_source 'user', stay). The rows
    of a warehouse from before the column (NULL there, every one wordfreq's) are replaced too."""
    from predictabase.ingest.raw import replace_partitions_in

    n = replace_partitions_in(con, load.tables)
    con.execute(f"DELETE FROM raw.{TABLE} WHERE frequency_source IS NULL")
    return n
