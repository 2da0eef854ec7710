"""Word surprisal, LW and WT (Oh & Schuler 2024), through the one SQL definition (dbt macro `word_surprisal_sql`).

1. Alignment of tokens to a corpus's own (whitespace-delimited) words, for tokenizers with and without a
   leading-space marker: byte-level BPE (the real GPT-2 files, SmolLM2's real tokenizer), SentencePiece
   style (a `▁` tokenizer trained offline; a real SentencePiece model trained offline with byte fallback,
   whose byte pieces split multi-byte characters), on every text of Natural Stories, Provo and UCL. The
   expected tokens of each word come from an independent walk over the tokens' own bytes (never from the
   scorer's character spans).
2. WT against an independent computation: a plain forward pass, our own log_softmax and our own
   word-initial mask (each vocabulary id decoded, whitespace first, plus the end-of-text id).
3. The real warehouse (conftest.real_warehouse): per text, sum ln p_WT - sum ln p_LW = ln B after the
   last word; no unaligned word; the GPT-3 import is LW only (checked against its raw CSV); the UCL
   precomputed words as given (a copy of it with them ingested, checked against all_measures.csv).
4. The real Gemma 3 tokenizer from its GGUF (`make test` installs it; skipped in one line without it).
"""

from __future__ import annotations

import csv
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

import duckdb
import jinja2
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
import torch

from predictabase.core.config import DBT_PROJECT_DIR
from predictabase.ingest.scoring.profile import TokenizerProfile
from predictabase.ingest.scoring.sentence import SentenceScorer, word_surprisal_sql, words_of
from tests.scoring_helpers import gpt2_tokenizer, natural_stories, smollm2_tokenizer, ucl_sentences

# ----------------------------------------------------------------------------------------- corpora


def provo_texts(mirror: Path) -> dict[int, str]:
    """The 55 Provo paragraphs as the loader reads them (single spaces; the Mac Roman mojibake of texts
    27, 36, 45, 54 repaired to ’ and —)."""
    from predictabase.ingest.datasets.provo import parse_text

    d = mirror / "provo_vasilev" / "corpus" / "Texts"
    return {n: parse_text((d / f"{n}.txt").read_bytes(), f"{n}.txt") for n in range(1, 56)}


@pytest.fixture(scope="module")
def corpora(mirror) -> dict[str, dict[str, tuple[str, list[str]]]]:
    """{corpus: {doc_id: (text, the corpus's own words)}}. Natural Stories: all_stories.tok, one word a
    row, joined by single spaces; Provo: the whitespace words of each paragraph; UCL: the words of each
    sentence of all_measures.csv (its rows hold every word but the first, checked below)."""
    ns_words: dict[int, list[str]] = {}
    with open(mirror / "natural_stories" / "naturalstories_RTS" / "all_stories.tok", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            ns_words.setdefault(int(row["item"]), []).append(row["word"])
    ns = natural_stories(mirror)
    out = {
        "natural_stories": {str(k): (ns[k], ws) for k, ws in sorted(ns_words.items())},
        "provo": {str(k): (t, t.split()) for k, t in provo_texts(mirror).items()},
        "ucl": {},
    }
    rows_by_sentence: dict[str, dict[int, str]] = {}
    with open(mirror / "ucl_devarda" / "all_measures.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            rows_by_sentence.setdefault(row["sentence"], {})[int(row["context_length"])] = row["word"]
    for i, s in enumerate(ucl_sentences(mirror, 205)):
        ws = s.split(" ")
        assert rows_by_sentence[s] == {k: ws[k] for k in range(1, len(ws))}  # all_measures' own words
        out["ucl"][str(i + 1)] = (s, ws)
    assert [len(v) for v in out.values()] == [10, 55, 205]
    assert sum(len(ws) for v in out.values() for _, ws in v.values()) == 10256 + 2745 + 1931
    return out


# ------------------------------------------------------------------------------------- tokenizers


def gpt2_byte_table() -> dict[str, int]:
    """GPT-2's byte -> printable character table (Radford et al.'s bytes_to_unicode), inverted."""
    bs = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


BYTE_TABLE = gpt2_byte_table()


def piece_bytes(piece: str, byte_level: bool) -> bytes:
    """The bytes a vocabulary string stands for: byte-level BPE through GPT-2's table; SentencePiece
    `▁` = space and a byte-fallback piece `<0xE2>` = that byte."""
    if byte_level:
        return bytes(BYTE_TABLE[ch] for ch in piece)
    if len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
        return bytes([int(piece[3:5], 16)])
    return piece.replace("\u2581", " ").encode("utf-8")


@dataclass
class Tok:
    name: str
    tokenizer: object
    model_type: str
    byte_level: bool
    prepends_space: bool  # the tokenizer puts a `▁` before the first word (not a character of the text)


def sentencepiece_bpe(texts: list[str]):
    """A SentencePiece-style (`▁` Metaspace) BPE tokenizer trained offline, as in test_scoring_bos, here on
    the texts themselves so that every character is in its alphabet (no <unk>)."""
    from tokenizers import SentencePieceBPETokenizer
    from transformers import PreTrainedTokenizerFast

    sp = SentencePieceBPETokenizer()
    sp.train_from_iterator(texts, vocab_size=400, special_tokens=["<unk>", "<s>", "</s>"], show_progress=False)
    return PreTrainedTokenizerFast(tokenizer_object=sp._tokenizer, bos_token="<s>", eos_token="</s>", unk_token="<unk>")


def sentencepiece_byte_fallback(train: list[str], check: list[str]):
    """A real SentencePiece BPE model (the `sentencepiece` trainer, byte_fallback=True) trained offline on
    ASCII-only UCL sentences, as a fast tokenizer built the way Llama's converter builds one (BPE with
    byte fallback, Metaspace `▁` prepended to the first word). Characters it never saw (’ — “ é) become
    byte pieces <0xE2> <0x80> <0x99>: one character split over three tokens. The fast tokenizer must give
    exactly the SentencePiece processor's own ids on every text."""
    import io

    import sentencepiece as spm
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    from transformers.tokenization_utils_base import generate_merges

    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(train),
        model_writer=buf,
        vocab_size=500,
        model_type="bpe",
        byte_fallback=True,
        character_coverage=1.0,
        minloglevel=2,
    )
    sp = spm.SentencePieceProcessor(model_proto=buf.getvalue())
    vocab = {sp.id_to_piece(i): i for i in range(sp.get_piece_size())}
    t = Tokenizer(
        models.BPE(vocab=vocab, merges=generate_merges(vocab), unk_token="<unk>", fuse_unk=True, byte_fallback=True)
    )
    t.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first", split=False)
    t.decoder = decoders.Sequence(
        [decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
    )
    tok = PreTrainedTokenizerFast(tokenizer_object=t, bos_token="<s>", eos_token="</s>", unk_token="<unk>")
    for text in check:
        assert tok(text, add_special_tokens=False)["input_ids"] == sp.encode(text), text[:60]
    return tok


# a constructed sentence for the byte-fallback tokenizer: é, curly quotes and a dash, none in its training
BYTE_FALLBACK_EXTRA = "The caf\u00e9\u2019s \u201cmenu\u201d \u2014 d\u00e9j\u00e0 vu, the girls\u2019 \u00e9clair."


@pytest.fixture(scope="module")
def tokenizers_(corpora) -> dict[str, Tok]:
    texts = [t for docs in corpora.values() for t, _ in docs.values()]
    ucl = [t for t, _ in corpora["ucl"].values()]
    assert all(t.isascii() for t in ucl)
    return {
        "gpt2": Tok("gpt2", gpt2_tokenizer(), "gpt2", True, False),
        "smollm2": Tok("smollm2", smollm2_tokenizer(), "llama", True, False),
        "sp-bpe": Tok("sp-bpe", sentencepiece_bpe(texts), "llama", False, True),
        "sp-byte-fallback": Tok(
            "sp-byte-fallback", sentencepiece_byte_fallback(ucl, texts + [BYTE_FALLBACK_EXTRA]), "llama", False, True
        ),
    }


# --------------------------------------------------------------------------------- the macro


TOKEN_COLUMNS = [
    "run_id",
    "model_key",
    "corpus",
    "doc_id",
    "token_index",
    "token_id",
    "token",
    "char_start",
    "char_end",
    "logprob_nats",
    "logprob_word_initial_nats",
    "logprob_word_initial_after_nats",
]


def fake_scores(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct per-token numbers for the macro's arithmetic: ln p, ln B before, ln B after (after token i
    = before token i + 1; after the last = a number of its own, as the scorer stores them)."""
    rng = np.random.default_rng(seed)
    lp = -rng.uniform(0.1, 9.0, n)
    before = -rng.uniform(0.0, 2.0, n)
    after = np.append(before[1:], -rng.uniform(0.0, 2.0))
    return lp, before, after


def encode_docs(tok: Tok, corpus: str, docs: dict[str, tuple[str, list[str]]]):
    """Token rows (the scorer's spans from TokenizerProfile.encode, fake scores) and the corpus's words."""
    profile = TokenizerProfile.build(tok.tokenizer, tok.model_type, len(tok.tokenizer), tok.name)
    assert profile.byte_level == tok.byte_level
    ids_spans = profile.encode([t for t, _ in docs.values()])
    tokens = {c: [] for c in TOKEN_COLUMNS}
    words = {c: [] for c in ("corpus", "doc_id", "word_index", "word", "char_start", "char_end")}
    per_doc = {}
    for (doc_id, (text, ws)), (ids, spans), seed in zip(docs.items(), ids_spans, range(10_000)):
        lp, before, after = fake_scores(len(ids), seed)
        per_doc[doc_id] = (text, ws, ids, lp, before, after)
        for i, (tid, (a, b)) in enumerate(zip(ids, spans)):
            for c, v in zip(
                TOKEN_COLUMNS,
                ("run", tok.name, corpus, doc_id, i, tid, profile.strings[tid], a, b, lp[i], before[i], after[i]),
            ):
                tokens[c].append(v)
        pos = 0
        for k, w in enumerate(ws):
            assert text[pos : pos + len(w)] == w
            for c, v in zip(words, (corpus, doc_id, k, w, pos, pos + len(w))):
                words[c].append(v)
            pos += len(w) + 1
        assert pos - 1 == len(text)
    return profile, pa.table(tokens), pa.table(words), per_doc


def run_macro(tokens: pa.Table, words: pa.Table) -> list[dict]:
    con = duckdb.connect(":memory:")
    try:
        con.register("t", tokens)
        con.register("w", words)
        cur = con.execute(f"select * from ({word_surprisal_sql('t', 'w')}) order by corpus, doc_id, word_index")
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall()]
    finally:
        con.close()


def expected_groups(tok: Tok, profile, text: str, ws: list[str], ids: list[int]) -> list[tuple[int, int]]:
    """Independently of any span: walk the tokens' own bytes; word k's tokens are those whose bytes
    concatenate to exactly its leading whitespace + the word (the first word: the word, or `▁` + the
    word for a tokenizer that prepends one). Fails if a token's bytes run past a word's end."""
    groups, buf, first, k = [], b"", 0, 0
    for i, tid in enumerate(ids):
        buf += piece_bytes(profile.strings[tid], tok.byte_level)
        want = (" " if k > 0 or tok.prepends_space else "") + ws[k]
        if buf == want.encode():
            groups.append((first, i))
            buf, first, k = b"", i + 1, k + 1
        else:
            assert want.encode().startswith(buf), f"{tok.name}: token {i} crosses the end of word {k} {ws[k]!r}"
    assert k == len(ws) and buf == b"", f"{tok.name}: tokens left over after the last word"
    return groups


# words with punctuation, apostrophes, hyphens, opening and closing quotes, a curly apostrophe split into
# byte pieces, a dash, first and last words: (corpus, doc_id, word_index or -1 for the last word, word)
SPECIAL_WORDS = [
    ("natural_stories", "1", 0, "If"),
    ("natural_stories", "1", 9, "England,"),
    ("natural_stories", "1", 54, "long-bearded"),
    ("natural_stories", "1", -1, "Boar."),
    ("natural_stories", "2", 800, "ducks'"),
    ("natural_stories", "6", 413, "'Don't"),
    ("natural_stories", "6", 1013, "don't"),
    ("natural_stories", "4", 1084, "hedge-king!'"),
    ("provo", "25", 26, "girls'"),
    ("provo", "13", 19, "don't"),
    ("provo", "2", 24, '"two'),
    ("provo", "2", 31, 'light"'),
    ("provo", "10", 10, 'side."'),
    ("provo", "27", 43, "doesn\u2019t"),
    ("provo", "54", 26, "bonds\u2019"),
    ("provo", "36", 24, "\u2014"),
    ("provo", "1", -1, "song."),
    ("ucl", "1", 0, "Arthur"),
    ("ucl", "1", -1, "counter."),
    ("ucl", "24", 0, "Don't"),
]

# the real GPT-2 BPE's tokens of some of them (SmolLM2's are the same but for ’, one token 'âĢĻ')
GPT2_TOKENS = {
    ("natural_stories", "1", 0): ["If"],
    ("natural_stories", "1", 9): ["ĠEngland", ","],
    ("natural_stories", "1", 54): ["Ġlong", "-", "be", "arded"],
    ("natural_stories", "6", 1013): ["Ġdon", "'t"],
    ("provo", "25", 26): ["Ġgirls", "'"],
    ("provo", "2", 24): ['Ġ"', "two"],
    ("provo", "2", 31): ["Ġlight", '"'],
    ("provo", "27", 43): ["Ġdoesn", "âĢ", "Ļ", "t"],
    ("provo", "54", 26): ["Ġbonds", "âĢ", "Ļ"],
    ("ucl", "1", -1): ["Ġcounter", "."],
}


@pytest.mark.parametrize("name", ["gpt2", "smollm2", "sp-bpe", "sp-byte-fallback"])
def test_every_corpus_word_is_aligned(name, tokenizers_, corpora):
    tok = tokenizers_[name]
    n_multi = 0
    for corpus, docs in corpora.items():
        profile, tokens, words, per_doc = encode_docs(tok, corpus, docs)
        out = run_macro(tokens, words)
        # none dropped or merged: exactly the words that went in, in order
        assert len(out) == words.num_rows
        assert [(r["doc_id"], r["word_index"], r["word"]) for r in out] == sorted(
            zip(words["doc_id"].to_pylist(), words["word_index"].to_pylist(), words["word"].to_pylist())
        )
        by_doc: dict[str, list[dict]] = {}
        for r in out:
            by_doc.setdefault(r["doc_id"], []).append(r)
        for doc_id, rows in by_doc.items():
            text, ws, ids, lp, before, after = per_doc[doc_id]
            groups = expected_groups(tok, profile, text, ws, ids)
            got = [(r["first_token_index"], r["last_token_index"]) for r in rows]
            assert got == groups, f"{name} {corpus}/{doc_id}"
            # one first and one last token per word; the words' tokens tile the document's tokens
            assert got[0][0] == 0 and got[-1][1] == len(ids) - 1
            assert all(b[0] == a[1] + 1 for a, b in zip(got, got[1:]))
            for k, (r, (f, l)) in enumerate(zip(rows, groups)):
                assert r["is_aligned"] and r["n_tokens"] == l - f + 1 and r["is_multitoken"] == (l > f)
                # the owned span: the leading whitespace + the word (the last word: to the end of the text)
                assert (r["span_start"], r["span_end"]) == ((0 if k == 0 else r["char_start"] - 1), r["char_end"])
                assert text[r["span_start"] : r["span_end"]] == (" " if k else "") + ws[k]
                assert r["is_last_word"] == (k == len(ws) - 1)
                want_lw = float(lp[f : l + 1].sum())
                assert r["logprob_lw_nats"] == pytest.approx(want_lw, abs=1e-9)
                assert r["logprob_boundary_after_nats"] == pytest.approx(after[l], abs=1e-12)
                if k == 0:  # the first word of a text: conditioned on BOS only, no before-term
                    assert r["logprob_boundary_before_nats"] is None
                    assert r["logprob_wt_nats"] == pytest.approx(want_lw + after[l], abs=1e-9)
                else:
                    assert r["logprob_boundary_before_nats"] == pytest.approx(before[f], abs=1e-12)
                    assert r["logprob_wt_nats"] == pytest.approx(want_lw + after[l] - before[f], abs=1e-9)
            n_multi += sum(r["is_multitoken"] for r in rows)
            # per text: sum WT - sum LW = ln B after the last token (the end of the text)
            assert sum(r["logprob_wt_nats"] for r in rows) - sum(r["logprob_lw_nats"] for r in rows) == pytest.approx(
                after[-1], abs=1e-8
            )
        # the special words, found by their text
        for c, d, k, w in SPECIAL_WORDS:
            if c != corpus:
                continue
            rows = by_doc[d]
            r = rows[k]
            assert r["word"] == w and r["is_aligned"] and r["logprob_wt_nats"] is not None, (name, c, d, k, w)
            if name == "gpt2" and (c, d, k) in GPT2_TOKENS:
                strings = tokens.filter(pc.equal(tokens["doc_id"], d))["token"].to_pylist()
                assert strings[r["first_token_index"] : r["last_token_index"] + 1] == GPT2_TOKENS[(c, d, k)]
            if w in ("England,", "long-bearded", "girls'", "don't", '"two', 'light"', "doesn\u2019t"):
                assert r["is_multitoken"], (name, w)
    assert n_multi > 2000  # many multi-token words in every tokenizer


def test_byte_fallback_pieces_split_a_character_inside_one_word(tokenizers_):
    """é, ’, “, ” and — become three (two) byte pieces each; the piece after the first has an empty span
    and still belongs to the word; every word is aligned."""
    tok = tokenizers_["sp-byte-fallback"]
    text = BYTE_FALLBACK_EXTRA
    ws = text.split(" ")
    profile, tokens, words, per_doc = encode_docs(tok, "typed", {"1": (text, ws)})
    strings = tokens["token"].to_pylist()
    assert strings.count("<0xE2>") == 5 and strings.count("<0xC3>") == 4  # ’ “ ” — ’ ; é é à é
    spans = list(zip(tokens["char_start"].to_pylist(), tokens["char_end"].to_pylist()))
    empty = [i for i, (a, b) in enumerate(spans) if a == b]
    assert len(empty) == 5 * 2 + 4  # the 2nd and 3rd piece of a 3-byte char, the 2nd of a 2-byte one
    out = run_macro(tokens, words)
    assert [r["word"] for r in out] == ws and all(r["is_aligned"] for r in out)
    assert [(r["first_token_index"], r["last_token_index"]) for r in out] == expected_groups(
        tok, profile, text, ws, per_doc["1"][2]
    )
    cafe = out[1]
    assert cafe["word"] == "caf\u00e9\u2019s"
    assert strings[cafe["first_token_index"] : cafe["last_token_index"] + 1][-6:] == [
        "<0xC3>",
        "<0xA9>",
        "<0xE2>",
        "<0x80>",
        "<0x99>",
        "s",
    ]
    dash = next(r for r in out if r["word"] == "\u2014")
    assert strings[dash["first_token_index"] : dash["last_token_index"] + 1] == ["\u2581", "<0xE2>", "<0x80>", "<0x94>"]


def render_dbt_test(relation: str) -> str:
    """The dbt test assert_word_surprisal_unaligned_words, with ref('int_word_surprisal') -> relation."""
    sql = (DBT_PROJECT_DIR / "tests" / "words" / "assert_word_surprisal_unaligned_words.sql").read_text()
    return jinja2.Environment(undefined=jinja2.StrictUndefined).from_string(sql).render(ref=lambda name: relation)


def test_a_token_crossing_a_word_boundary_leaves_words_unaligned_not_dropped(mirror):
    """Fake token rows over a real UCL sentence: one token spans ' the bars' (two words), another
    'ed on' (the end of one word and the start of the next). Those words are kept with NULL surprisals,
    listed by the dbt test; every other word keeps its numbers."""
    text = ucl_sentences(mirror, 1)[0]
    assert text == "Arthur placed the bars of chocolate on the counter."
    # Arthur| placed| the bars| of| chocolate| on| the| counter| .  -> split so that tokens cross words
    pieces = ["Arthur", " placed", " the bars", " of", " chocolat", "e on", " the", " counter", "."]
    assert "".join(pieces) == text
    spans, pos = [], 0
    for p in pieces:
        spans.append((pos, pos + len(p)))
        pos += len(p)
    n = len(pieces)
    lp, before, after = fake_scores(n, 7)
    tokens = pa.table(
        {
            "run_id": ["r"] * n,
            "model_key": ["m"] * n,
            "corpus": ["ucl"] * n,
            "doc_id": ["1"] * n,
            "token_index": list(range(n)),
            "token_id": list(range(n)),
            "token": pieces,
            "char_start": [a for a, _ in spans],
            "char_end": [b for _, b in spans],
            "logprob_nats": lp,
            "logprob_word_initial_nats": before,
            "logprob_word_initial_after_nats": after,
        }
    )
    words = words_of(text).with_columns(corpus=pl.lit("ucl")).to_arrow()
    out = run_macro(tokens, words)
    assert [r["word"] for r in out] == text.split(" ")  # 9 words in, 9 out
    unaligned = {r["word"]: r for r in out if not r["is_aligned"]}
    assert set(unaligned) == {"the", "bars", "chocolate", "on"}
    # 'the' (index 2) has no token of its own: ' the bars' ends in 'bars'
    assert unaligned["the"]["n_tokens"] == 0 and unaligned["the"]["first_token_index"] is None
    assert unaligned["bars"]["n_tokens"] == 1 and unaligned["bars"]["first_token_index"] == 2
    for r in unaligned.values():
        for col in (
            "logprob_lw_nats",
            "logprob_wt_nats",
            "logprob_boundary_before_nats",
            "logprob_boundary_after_nats",
        ):
            assert r[col] is None, (r["word"], col)
    aligned = [r for r in out if r["is_aligned"]]
    assert [r["word"] for r in aligned] == ["Arthur", "placed", "of", "the", "counter."]
    counter = aligned[-1]
    assert (counter["first_token_index"], counter["last_token_index"]) == (7, 8)
    assert counter["logprob_lw_nats"] == pytest.approx(lp[7] + lp[8])
    assert counter["logprob_wt_nats"] == pytest.approx(lp[7] + lp[8] + after[8] - before[7])
    # the dbt test lists exactly these words by id
    con = duckdb.connect(":memory:")
    con.register("t", tokens)
    con.register("w", words)
    con.execute(f"create table iws as {word_surprisal_sql('t', 'w')}")
    listed = con.execute(render_dbt_test("iws") + " order by word_id").fetchall()
    assert [r[0] for r in listed] == ["ucl/1/2", "ucl/1/3", "ucl/1/5", "ucl/1/6"]


# ------------------------------------------------------------------ WT against an independent computation


def independent_word_surprisal(model, tokenizer, bos_id: int, eot_id: int, text: str):
    """No project code: the tokenizer's ids, one plain forward pass, our own log_softmax and word-initial
    mask (decode each vocabulary id: does its text start with whitespace? plus the end-of-text id), and
    our own grouping of tokens into words (a token starting with whitespace starts a word).
    Returns the words (lw, wt, before, after, tokens), the [n + 1, V] log-probabilities and the mask."""
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logits = model(torch.tensor([[bos_id] + ids])).logits[0].double()
    lp = torch.log_softmax(logits, -1)  # row j predicts token j; row len(ids): after the last token
    V = lp.shape[1]
    mask = torch.tensor([tokenizer.decode([i], clean_up_tokenization_spaces=False)[:1].isspace() for i in range(V)])
    mask[eot_id] = True
    ln_b = ln_mass(lp, mask)
    pieces = [tokenizer.decode([i], clean_up_tokenization_spaces=False) for i in ids]
    groups: list[list[int]] = []
    for j, p in enumerate(pieces):
        if j == 0 or p[:1].isspace():
            groups.append([])
        groups[-1].append(j)
    out = []
    for k, g in enumerate(groups):
        lw = float(sum(lp[j, ids[j]] for j in g))
        after = float(ln_b[g[-1] + 1])
        before = float(ln_b[g[0]]) if k > 0 else 0.0
        out.append(
            dict(
                word="".join(pieces[j] for j in g).strip(),
                tokens=[pieces[j] for j in g],
                lw=lw,
                wt=lw + after - before,
                after=after,
                before=before if k else None,
            )
        )
    return out, lp, mask


def ln_mass(lp, mask):
    """ln of the probability mass on the ids in `mask`, per row."""
    return torch.logsumexp(lp.masked_fill(~mask, float("-inf")), -1).numpy()


def with_logit_bias(model, bias: dict[int, float]):
    """A copy of the model whose LM head adds a constant to some ids' logits (an untied head with a bias):
    the random tiny models give <|endoftext|> ~e-28 of the mass, too little for its share of B to show."""
    import copy

    m = copy.deepcopy(model)
    old = m.get_output_embeddings()
    head = torch.nn.Linear(old.in_features, old.out_features, bias=True)
    with torch.no_grad():
        head.weight.copy_(old.weight)
        head.bias.zero_()
        for i, b in bias.items():
            head.bias[i] = b
    m.set_output_embeddings(head)
    return m.eval()


# The project's numbers against ours, in nats. The scorer takes a float32 log-softmax (as the model's own loss
# does); ours is float64. The tiny models' sharpened heads give logits of a few hundred, where float32
# log-probabilities carry ~1e-5 nats of rounding (measured: up to 1.3e-5 per token, 2e-5 in ln B).
TOL = 5e-5

NS1_FIRST_SENTENCE = (
    "If you were to journey to the North of England, you would come to a valley that is "
    "surrounded by moors as high as mountains."
)


@pytest.fixture(scope="module")
def tiny_models(tiny_gpt2_dir, tmp_path_factory):
    """The tiny GPT-2 (real GPT-2 tokenizer) and a tiny Llama with SmolLM2's real tokenizer."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from tests.scoring_helpers import build_tiny_llama

    llama_dir = build_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))
    out = {}
    for name, d, mt, bos in (("gpt2", tiny_gpt2_dir, "gpt2", 50256), ("smollm2", llama_dir, "llama", 0)):
        model = AutoModelForCausalLM.from_pretrained(d, dtype=torch.float32).eval()
        tok = AutoTokenizer.from_pretrained(d)
        out[name] = (model, tok, mt, bos)
    return out


@pytest.mark.parametrize("boost", [False, True], ids=["plain", "end-of-text-boosted"])
@pytest.mark.parametrize("name", ["gpt2", "smollm2"])
def test_wt_equals_an_independent_forward_pass(name, boost, tiny_models, mirror):
    """The first sentence of Natural Stories story 1 (25 words) through SentenceScorer (the scorer and
    the macro) against our own computation. Boosted: the end-of-text id gets +30 on its logit (SmolLM2:
    also <|im_end|>, id 2, which must NOT count), so that the end-of-text share of B is large."""
    model, tok, model_type, bos = tiny_models[name]
    text = natural_stories(mirror)[1][: len(NS1_FIRST_SENTENCE)]
    assert text == NS1_FIRST_SENTENCE
    eot = 50256 if name == "gpt2" else 0  # <|endoftext|>; SmolLM2's declared EOS <|im_end|> (2) is not one
    assert tok.convert_ids_to_tokens(eot) == "<|endoftext|>"
    if boost:
        model = with_logit_bias(model, {eot: 30.0} if name == "gpt2" else {eot: 30.0, 2: 31.0})
    mine, lp, mask = independent_word_surprisal(model, tok, bos, eot, text)
    assert [w["word"] for w in mine] == text.split(" ")  # 25 words
    profile = TokenizerProfile.build(tok, model_type, len(tok), f"tiny-{name}")
    assert profile.bos.token_id == bos and profile.end_of_text_ids == {eot}
    got = SentenceScorer.from_parts(model, profile).word_surprisals(text).to_dicts()
    assert [g["word"] for g in got] == text.split(" ") and all(g["is_aligned"] for g in got)
    diffs = []
    for g, m in zip(got, mine):
        assert g["n_tokens"] == len(m["tokens"]), g["word"]
        assert -g["surprisal_lw_nats"] == pytest.approx(m["lw"], abs=TOL), g["word"]
        assert -g["surprisal_wt_nats"] == pytest.approx(m["wt"], abs=TOL), g["word"]
        diffs.append(max(abs(-g["surprisal_lw_nats"] - m["lw"]), abs(-g["surprisal_wt_nats"] - m["wt"])))
        # bits = nats / ln 2
        assert g["surprisal_lw_bits"] * math.log(2) == pytest.approx(-m["lw"], abs=TOL)
        assert g["surprisal_wt_minus_lw_bits"] * math.log(2) == pytest.approx(m["lw"] - m["wt"], abs=TOL)
    print(
        f"{name} {'boosted' if boost else 'plain'}: max |project - independent| = {max(diffs):.2e} nats "
        f"over {len(got)} words"
    )
    # "England," is two tokens, ĠEngland and ","
    england = got[9]
    assert england["word"] == "England," and england["tokens"] == ["ĠEngland", ","]
    assert mine[9]["tokens"] == [" England", ","]
    # the first word: no before-term (conditioned on BOS only): WT = LW + ln B after it
    first = got[0]
    assert first["is_first_word"] and first["tokens"] == ["If"] and first["logprob_boundary_before_nats"] is None
    assert -first["surprisal_wt_nats"] == pytest.approx(mine[0]["lw"] + mine[0]["after"], abs=TOL)
    # the last word "mountains." (Ġmountains, .): after-term = ln B at the end of the text, i.e. the mass
    # on word-initial tokens + end-of-text at the position after its last token
    last = got[-1]
    assert last["is_last_word"] and last["word"] == "mountains." and last["tokens"] == ["Ġmountains", "."]
    ln_b_end = float(ln_mass(lp, mask)[-1])
    assert last["logprob_boundary_after_nats"] == pytest.approx(ln_b_end, abs=TOL)
    assert -last["surprisal_wt_nats"] == pytest.approx(mine[-1]["lw"] + ln_b_end - mine[-1]["before"], abs=TOL)
    # per text: sum WT - sum LW = ln B at the end of the text
    assert sum(-g["surprisal_wt_nats"] for g in got) - sum(-g["surprisal_lw_nats"] for g in got) == pytest.approx(
        ln_b_end, abs=TOL
    )
    # the correction is not a no-op here: WT moves some word by more than 0.1 nats
    assert max(abs(m["wt"] - m["lw"]) for m in mine) > 0.1
    without_eot = mask.clone()
    without_eot[eot] = False
    share = ln_b_end - float(ln_mass(lp, without_eot)[-1])
    if boost:  # end-of-text carries a real share of B at the end of the text, and the project counts it
        assert share > 0.5
        if name == "smollm2":  # ... but not <|im_end|>, although the model gives it more mass than <|endoftext|>
            assert lp[-1, 2] > lp[-1, 0]
            with_im_end = mask.clone()
            with_im_end[2] = True
            assert abs(last["logprob_boundary_after_nats"] - float(ln_mass(lp, with_im_end)[-1])) > 0.3
    else:
        assert share < 1e-6  # the random model barely predicts <|endoftext|>


# ---------------------------------------------------------------------------------- the real warehouse


def wh_query(paths, sql: str, params=None) -> list[dict]:
    with duckdb.connect(str(paths.duckdb), read_only=True) as con:
        cur = con.execute(sql, params or [])
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall()]


def test_real_warehouse_ucl_run_matches_an_independent_forward_pass(real_warehouse, tiny_models):
    """The dbt mart of the UCL run (the tiny GPT-2 of conftest) against our own forward pass, every one
    of the 205 sentences: per text sum WT - sum LW = ln B after the last word (the number stored in the
    token Parquet, to 1e-6); LW and WT per word of 23 sentences against our own forward pass (TOL); no
    unaligned word (the compiled dbt test returns 0 rows and the build recorded it as passed)."""
    model, tok, _, _ = tiny_models["gpt2"]
    [run] = wh_query(
        real_warehouse,
        "select distinct run_id, model_key, definitions, end_of_text_tokens from "
        "marts.mart_word_surprisal where corpus = 'ucl' and run_source = 'scored'",
    )
    assert run["definitions"] == "LW and WT" and run["end_of_text_tokens"] == "<|endoftext|>"
    docs = {
        r["doc_id"]: r["text"]
        for r in wh_query(real_warehouse, "select doc_id, text from raw.documents where corpus = 'ucl'")
    }
    mart = wh_query(
        real_warehouse,
        "select * from marts.mart_word_surprisal where run_id = ? order by doc_id, word_index",
        [run["run_id"]],
    )
    assert len(docs) == 205 and len(mart) == 1931 and all(r["is_aligned"] for r in mart)
    by_doc: dict[str, list[dict]] = {}
    for r in mart:
        by_doc.setdefault(r["doc_id"], []).append(r)
    assert set(by_doc) == set(docs)
    # the stored ln B after each document's last token, from the run's own token Parquet
    rdir = next(real_warehouse.token_scores.glob(f"model=*/corpus=ucl/run={run['run_id']}"))
    toks = pa.concat_tables([pq.read_table(f, partitioning=None) for f in sorted(rdir.glob("part-*.parquet"))])
    last_after = {}
    for d, i, a in zip(
        toks["doc_id"].to_pylist(), toks["token_index"].to_pylist(), toks["logprob_word_initial_after_nats"].to_pylist()
    ):
        if i >= last_after.get(d, (-1, None))[0]:
            last_after[d] = (i, a)
    texts = {
        r["doc_id"]: r
        for r in wh_query(
            real_warehouse, "select * from intermediate.int_word_surprisal_texts where run_id = ?", [run["run_id"]]
        )
    }
    worst, n_independent = 0.0, 0
    for doc_id, rows in by_doc.items():
        mine = None
        if doc_id in ("1", "2", "3") or int(doc_id) % 10 == 0:
            mine, lp, mask = independent_word_surprisal(model, tok, 50256, 50256, docs[doc_id])
            ln_b_end = float(ln_mass(lp, mask)[-1])
        sum_wt = sum(-r["surprisal_wt_nats"] for r in rows)
        sum_lw = sum(-r["surprisal_lw_nats"] for r in rows)
        stored_end = last_after[doc_id][1]
        assert rows[-1]["is_last_word"]
        assert rows[-1]["logprob_boundary_after_nats"] == pytest.approx(stored_end, abs=1e-12)
        assert rows[0]["is_first_word"] and rows[0]["logprob_boundary_before_nats"] is None
        worst = max(worst, abs(sum_wt - sum_lw - stored_end))
        t = texts[doc_id]
        assert t["n_words"] == len(rows) and t["n_unaligned_words"] == 0
        assert t["sum_logprob_wt_nats"] - t["sum_logprob_lw_nats"] == pytest.approx(stored_end, abs=1e-6)
        assert abs(t["telescoping_error_nats"]) < 1e-6
        if mine is not None:
            assert [m["word"] for m in mine] == [r["word"] for r in rows]
            for m, r in zip(mine, rows):
                assert -r["surprisal_lw_nats"] == pytest.approx(m["lw"], abs=TOL), (doc_id, r["word"])
                assert -r["surprisal_wt_nats"] == pytest.approx(m["wt"], abs=TOL), (doc_id, r["word"])
                assert r["n_tokens"] == len(m["tokens"])
            assert sum_wt - sum_lw == pytest.approx(ln_b_end, abs=TOL)
            n_independent += 1
    assert worst < 1e-6 and n_independent == 23
    print(f"UCL: max |sum WT - sum LW - ln B(end)| = {worst:.1e} nats over {len(by_doc)} sentences")
    # the dbt test (compiled by the build) returns no row, and the build recorded it as passed
    compiled = next(
        (real_warehouse.warehouse / "dbt" / "target" / "compiled").rglob("assert_word_surprisal_unaligned_words.sql")
    )
    assert wh_query(real_warehouse, compiled.read_text()) == []
    results = json.loads((real_warehouse.warehouse / "dbt" / "target" / "run_results.json").read_text())
    [res] = [r for r in results["results"] if r["unique_id"].endswith("assert_word_surprisal_unaligned_words")]
    assert res["status"] == "pass" and res["failures"] == 0
    [summary] = wh_query(
        real_warehouse, "select * from marts.mart_word_surprisal_summary where run_id = ?", [run["run_id"]]
    )
    assert summary["n_words"] == 1931 and summary["n_unaligned_words"] == 0 and summary["n_words_with_wt"] == 1931
    assert summary["max_text_telescoping_error_nats"] < 1e-6


def test_real_warehouse_gpt3_is_lw_only(real_warehouse, mirror):
    # GPT-3 davinci on Natural Stories: tokens without boundary mass -> LW only, WT NULL
    gpt3 = wh_query(
        real_warehouse,
        "select * from marts.mart_word_surprisal where model_key = 'gpt3-davinci' order by doc_id, word_index",
    )
    assert len(gpt3) == 10256 and {r["definitions"] for r in gpt3} == {"LW only"}
    assert all(r["surprisal_wt_nats"] is None and r["logprob_boundary_after_nats"] is None for r in gpt3)
    assert all(r["is_aligned"] for r in gpt3)
    # its LW, independently from the raw CSV: story 0 = Natural Stories item 1; a word's tokens are the
    # CSV tokens from one starting with a space up to the next; the first token has no logprob upstream
    with open(mirror / "natural_stories" / "probs" / "all_stories_gpt3.csv", newline="") as fh:
        story = [r for r in csv.DictReader(fh) if r["story"] == "0"]
    groups: list[list[dict]] = []
    for r in story[:40]:
        if not groups or r["token"].startswith(" "):
            groups.append([])
        groups[-1].append(r)
    ns1 = [r for r in gpt3 if r["doc_id"] == "1"]
    assert ns1[0]["word"] == "If" and ns1[0]["surprisal_lw_nats"] is None  # the first token is not scored
    checked = 0
    for g, r in zip(groups[1:-1], ns1[1:]):
        assert "".join(t["token"] for t in g).strip() == r["word"]
        assert r["surprisal_lw_nats"] == pytest.approx(-sum(float(t["logprob"]) for t in g), abs=1e-9), r["word"]
        checked += 1
    assert checked >= 20 and ns1[9]["word"] == "England," and ns1[9]["n_tokens"] == 2
    assert ns1[9]["surprisal_lw_nats"] == pytest.approx(
        -(float(groups[9][0]["logprob"]) + float(groups[9][1]["logprob"])), abs=1e-9
    )


@pytest.fixture(scope="module")
def warehouse_with_ucl_precomputed(real_warehouse_ucl_imports):
    """A copy of the real warehouse with the UCL precomputed surprisals ingested (conftest's real warehouse
    does not ingest them; its staging view was built as an empty placeholder) and the word marts rebuilt
    (tests/conftest.py's real_warehouse_ucl_imports: everything downstream of them, once a session)."""
    return real_warehouse_ucl_imports


def test_ucl_precomputed_words_are_carried_as_given(warehouse_with_ucl_precomputed, mirror):
    """The UCL precomputed GPT-2 / GPT-Neo surprisals (nats upstream): LW only as given, no first word,
    each value equal to all_measures.csv's own, read here with csv."""
    wh = warehouse_with_ucl_precomputed
    with open(mirror / "ucl_devarda" / "all_measures.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    given = {(r["sent_id"], int(r["context_length"])): r for r in rows}
    assert len(given) == 1726
    for model, col in (
        ("gpt2", "GPT2"),
        ("gpt-neo-1.3b", "GPTNeo"),
        ("gpt2-xl", "GPT2_xl"),
        ("gpt-neo-125m", "GPTNeo_125M"),
    ):
        mart = wh_query(wh, "select * from marts.mart_word_surprisal where run_id = ?", [f"ucl-precomputed:{model}"])
        assert len(mart) == 1726 and {r["definitions"] for r in mart} == {"LW only (as given)"}
        assert {r["model_key"] for r in mart} == {model} and {r["run_source"] for r in mart} == {"imported_words"}
        assert not any(r["is_first_word"] for r in mart)  # upstream has no row for a sentence's first word
        assert all(r["surprisal_wt_nats"] is None and r["is_aligned"] is None for r in mart)
        for r in mart:
            src = given[(r["doc_id"], r["word_index"])]
            assert r["word"] == src["word"]
            assert r["surprisal_lw_nats"] == float(src[f"s_{col}"])
            assert r["surprisal_lw_bits"] == pytest.approx(float(src[f"s_{col}"]) / math.log(2), rel=1e-12)
            assert r["is_multitoken"] == (src[f"is_multitoken_{col}"] == "1")
    # one by hand: sentence 96 "Arthur placed the bars of chocolate on the counter.", 'the' (all_measures' row 2)
    [the] = wh_query(
        wh,
        "select * from marts.mart_word_surprisal where run_id = 'ucl-precomputed:gpt2' "
        "and doc_id = '96' and word_index = 2",
    )
    assert the["word"] == "the" and the["surprisal_lw_nats"] == 1.734722715868429 and not the["is_multitoken"]
    # the scored run next to them is unchanged by the rebuild: every word aligned, LW and WT
    [summary] = wh_query(
        wh, "select * from marts.mart_word_surprisal_summary where corpus = 'ucl' and run_source = 'scored'"
    )
    assert summary["n_unaligned_words"] == 0 and summary["n_words_with_wt"] == 1931


# ------------------------------------------------------------------------------------------ Gemma 3


@pytest.fixture(scope="module")
def gemma_tokenizer(tmp_path_factory):
    """The real Gemma 3 270M tokenizer, read from its GGUF when the optional packages are installed."""
    from predictabase.core.config import paths as make_paths
    from predictabase.core.errors import ModelLoadError
    from predictabase.ingest.scoring.models import gemma3_gguf

    # `make test` installs the Gemma packages (`make gemma`); only their absence skips, in one line: a broken
    # install or a tokenizer that does not load fails (any exception was once a skip, so CI never ran this)
    try:
        gguf = gemma3_gguf(make_paths(tmp_path_factory.mktemp("gemma") / "warehouse"))
    except ModelLoadError as exc:
        if os.environ.get("PREDICTABASE_REQUIRE_GEMMA") == "1":  # `make test` sets it: CI never skips these
            pytest.fail(f"Gemma 3 GGUF not installed though `make test` installs it: {exc}")
        pytest.skip(f"Gemma 3 GGUF not installed (`make gemma`): {exc}")
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)


def test_gemma3_real_tokenizer_aligns_every_word(gemma_tokenizer, corpora):
    tok = Tok("gemma3", gemma_tokenizer, "gemma3_text", False, False)
    assert len(gemma_tokenizer) == 262144 and gemma_tokenizer.bos_token == "<bos>"
    docs = {
        "natural_stories": {"1": corpora["natural_stories"]["1"]},
        "provo": {d: corpora["provo"][d] for d in ("2", "13", "25", "27", "36", "54")},
    }
    for corpus, dd in docs.items():
        profile, tokens, words, per_doc = encode_docs(tok, corpus, dd)
        assert not profile.byte_level and profile.end_of_text_ids == {1}  # <eos>, not <end_of_turn>
        out = run_macro(tokens, words)
        assert len(out) == words.num_rows and all(r["is_aligned"] for r in out)
        for d, (text, ws, ids, *_rest) in per_doc.items():
            rows = [r for r in out if r["doc_id"] == d]
            assert [(r["first_token_index"], r["last_token_index"]) for r in rows] == expected_groups(
                tok, profile, text, ws, ids
            )
        strings = tokens["token"].to_pylist()
        if corpus == "natural_stories":
            assert len(out) == 1073
            england = out[9]
            assert england["word"] == "England," and strings[
                england["first_token_index"] : england["last_token_index"] + 1
            ] == ["\u2581England", ","]
            assert strings[0] == "If"  # no `▁` before the first word
        else:
            doesnt = next(r for r in out if r["doc_id"] == "27" and r["word_index"] == 43)
            assert doesnt["word"] == "doesn\u2019t" and doesnt["is_multitoken"]
