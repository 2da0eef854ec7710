"""The end-of-text rule (predictabase.ingest.scoring.profile.end_of_text_ids) for each tokenizer style, its place in the
word-initial mask, in the run id and in a scored run's `_run.json`.

End of text = the document separator the model was pre-trained with: `<|endoftext|>` or `<|end_of_text|>`
when the vocabulary has one, else the declared EOS unless that is a chat end-of-turn marker; it is never a
chat turn end (SmolLM2-Instruct declares `<|im_end|>` as EOS: it does not count). It enters B, the mass on
word-initial tokens + end-of-text, which WT word surprisal uses after a text's last word.
"""

from __future__ import annotations

import dataclasses
import json
import os

import numpy as np
import pyarrow as pa
import pytest
import torch

from predictabase.ingest.scoring import ScoreSettings, score_corpora, store
from predictabase.ingest.scoring import profile as profile_module
from predictabase.ingest.scoring.models import LoadedModel
from predictabase.ingest.scoring.pipeline import SCORER_VERSION, make_run_id
from predictabase.ingest.scoring.profile import CHAT_TURN_ENDS, TokenizerProfile, end_of_text_ids
from tests.scoring_helpers import build_tiny_llama, gpt2_tokenizer, smollm2_tokenizer, ucl_sentences, write_documents


def small_tokenizer(specials: list[str], words: list[str], byte_level: bool, **declared):
    """A real fast tokenizer built offline: a word-level vocabulary (specials first, then words), byte-level
    (`Ġ`, GPT-2 / Llama 3 style) or SentencePiece style (`▁` Metaspace, Llama 2 / Gemma style)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(specials + words)}
    t = Tokenizer(models.WordLevel(vocab, unk_token="<unk>" if "<unk>" in vocab else specials[0]))
    if byte_level:
        t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        t.decoder = decoders.ByteLevel()
    else:
        t.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first")
        t.decoder = decoders.Metaspace(prepend_scheme="first")
    others = [s for s in specials if s not in set(declared.values())]  # chat markers: special, not declared
    return PreTrainedTokenizerFast(tokenizer_object=t, additional_special_tokens=others, **declared)


BYTE_WORDS = ["Ġthe", "the", "Ġcat", "cat", "Ġ", "Ċ", "s"]
SP_WORDS = ["\u2581the", "the", "\u2581cat", "cat", "\u2581", "<0x0A>", "s"]


def llama3_style(eos: str):
    return small_tokenizer(
        ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<unk>"],
        BYTE_WORDS,
        True,
        bos_token="<|begin_of_text|>",
        eos_token=eos,
    )


def gemma_style(eos: str):
    return small_tokenizer(
        ["<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>"],
        SP_WORDS,
        False,
        bos_token="<bos>",
        eos_token=eos,
        pad_token="<pad>",
        unk_token="<unk>",
    )


def chatml_only():
    return small_tokenizer(
        ["<unk>", "<|im_start|>", "<|im_end|>"],
        SP_WORDS,
        False,
        bos_token="<|im_start|>",
        eos_token="<|im_end|>",
        unk_token="<unk>",
    )


def llama2_style():
    return small_tokenizer(
        ["<unk>", "<s>", "</s>"], SP_WORDS, False, bos_token="<s>", eos_token="</s>", unk_token="<unk>"
    )


def build(tok, model_type: str) -> TokenizerProfile:
    return TokenizerProfile.build(tok, model_type, len(tok), f"test-{model_type}")


def eot_tokens(p: TokenizerProfile) -> list[str]:
    return [str(p.strings[i]) for i in sorted(p.end_of_text_ids)]


def test_gpt2_endoftext():
    tok = gpt2_tokenizer()
    p = build(tok, "gpt2")
    assert p.end_of_text_ids == {50256} and eot_tokens(p) == ["<|endoftext|>"] and tok.eos_token_id == 50256
    assert p.word_initial[50256] and p.byte_level
    # the mask is exactly: decoded text starts with whitespace, plus <|endoftext|>
    want = np.array([tok.decode([i], clean_up_tokenization_spaces=False)[:1].isspace() for i in range(len(tok))])
    assert not want[50256]
    want[50256] = True
    np.testing.assert_array_equal(p.word_initial, want)


def test_smollm2_counts_endoftext_not_its_declared_eos_im_end():
    tok = smollm2_tokenizer()
    assert (tok.eos_token, tok.eos_token_id) == ("<|im_end|>", 2)  # what the GGUF declares
    assert tok.convert_ids_to_tokens([0, 1, 2]) == ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    assert end_of_text_ids(tok) == {0}
    p = build(tok, "llama")
    assert p.end_of_text_ids == {0} and eot_tokens(p) == ["<|endoftext|>"] and p.bos.token_id == 0
    mask = p.word_initial
    assert mask[0] and not mask[2] and not mask[1]
    # no other special token is word-initial; the rest of the mask is whitespace-first decoding
    want = np.array([tok.decode([i], clean_up_tokenization_spaces=False)[:1].isspace() for i in range(len(tok))])
    want[0] = True
    np.testing.assert_array_equal(mask, want)
    assert int(mask.sum()) == int(want.sum()) > 10_000


@pytest.mark.parametrize("eos", ["<|eot_id|>", "<|end_of_text|>"], ids=["instruct-eos-eot_id", "base-eos"])
def test_llama3_style_end_of_text_not_eot_id(eos):
    tok = llama3_style(eos)
    vocab = tok.get_vocab()
    assert tok.eos_token == eos and "<|eot_id|>" in CHAT_TURN_ENDS
    p = build(tok, "llama")
    assert p.byte_level
    assert p.end_of_text_ids == {vocab["<|end_of_text|>"]} and eot_tokens(p) == ["<|end_of_text|>"]
    assert p.word_initial[vocab["<|end_of_text|>"]] and not p.word_initial[vocab["<|eot_id|>"]]
    assert [s for s, i in sorted(vocab.items(), key=lambda kv: kv[1]) if p.word_initial[i]] == [
        "<|end_of_text|>",
        "Ġthe",
        "Ġcat",
        "Ġ",
        "Ċ",
    ]


def test_gemma_style_eos_not_end_of_turn():
    tok = gemma_style("<eos>")
    vocab = tok.get_vocab()
    assert "<end_of_turn>" in vocab and "<end_of_turn>" in CHAT_TURN_ENDS
    p = build(tok, "gemma3_text")
    assert not p.byte_level and p.bos.token_id == vocab["<bos>"] == 2
    assert p.end_of_text_ids == {vocab["<eos>"]} == {1} and eot_tokens(p) == ["<eos>"]
    assert [s for s, i in sorted(vocab.items(), key=lambda kv: kv[1]) if p.word_initial[i]] == [
        "<eos>",
        "\u2581the",
        "\u2581cat",
        "\u2581",
        "<0x0A>",
    ]


def test_gemma_instruct_style_declaring_end_of_turn_keeps_eos():
    """An instruct tokenizer that declares its chat turn end as EOS: the base model's <eos> counts."""
    tok = gemma_style("<end_of_turn>")
    vocab = tok.get_vocab()
    assert tok.eos_token == "<end_of_turn>"
    p = build(tok, "gemma3_text")
    assert p.end_of_text_ids == {vocab["<eos>"]} == {1} and eot_tokens(p) == ["<eos>"]
    assert not p.word_initial[vocab["<end_of_turn>"]]


def test_chatml_only_tokenizer_has_no_end_of_text():
    """No document separator and the declared EOS is a chat turn end: no end-of-text at all (B is the
    word-initial mass only)."""
    tok = chatml_only()
    assert tok.eos_token == "<|im_end|>" and "<|endoftext|>" not in tok.get_vocab()
    p = build(tok, "llama")
    assert p.end_of_text_ids == frozenset() and eot_tokens(p) == []
    vocab = tok.get_vocab()
    assert [s for s, i in sorted(vocab.items(), key=lambda kv: kv[1]) if p.word_initial[i]] == [
        "\u2581the",
        "\u2581cat",
        "\u2581",
        "<0x0A>",
    ]


def test_llama2_style_eos_and_separator_preferred_over_eos():
    tok = llama2_style()
    assert build(tok, "llama").end_of_text_ids == {2}  # </s>
    # a vocabulary with <|endoftext|> and another declared EOS: the separator, only
    both = small_tokenizer(
        ["<unk>", "<s>", "</s>", "<|endoftext|>"], SP_WORDS, False, bos_token="<s>", eos_token="</s>", unk_token="<unk>"
    )
    assert build(both, "llama").end_of_text_ids == {3}


def test_real_gemma3_tokenizer_eos(tmp_path):
    from transformers import AutoTokenizer

    from predictabase.core.config import paths as make_paths
    from predictabase.core.errors import ModelLoadError
    from predictabase.ingest.scoring.models import gemma3_gguf

    # `make test` installs the Gemma packages (`make gemma`); only their absence skips, in one line: a broken
    # install or a tokenizer that does not load fails (any exception was once a skip, so CI never ran this)
    try:
        gguf = gemma3_gguf(make_paths(tmp_path / "warehouse"))
    except ModelLoadError as exc:
        if os.environ.get("PREDICTABASE_REQUIRE_GEMMA") == "1":  # `make test` sets it: CI never skips these
            pytest.fail(f"Gemma 3 GGUF not installed though `make test` installs it: {exc}")
        pytest.skip(f"Gemma 3 GGUF not installed (`make gemma`): {exc}")
    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    vocab = tok.get_vocab()
    assert (tok.eos_token, vocab["<end_of_turn>"]) == ("<eos>", 106)
    p = build(tok, "gemma3_text")
    assert p.end_of_text_ids == {1} and eot_tokens(p) == ["<eos>"] and not p.word_initial[106]


# -------------------------------------------------------------------------------- run id and _run.json


def test_run_id_changes_with_the_end_of_text_ids():
    tok = gpt2_tokenizer()
    p = build(tok, "gpt2")
    lm = LoadedModel(
        model=None,
        tokenizer=tok,
        model_key="m",
        model_id="m",
        model_revision="rev",
        tokenizer_name="t",
        tokenizer_sha256="sha",
        vocab_size=len(tok),
        dtype="float32",
        device="cpu",
        max_positions=128,
        model_type="gpt2",
    )

    def rid(eot) -> str:
        return make_run_id(
            lm, dataclasses.replace(p, end_of_text_ids=frozenset(eot)), "ucl", "v1", 128, 64, ScoreSettings()
        )

    ids = {name: rid(eot) for name, eot in (("gpt2", {50256}), ("none", set()), ("two", {50256, 0}), ("other", {0}))}
    assert len(set(ids.values())) == 4
    assert rid({50256}) == ids["gpt2"] == make_run_id(lm, p, "ucl", "v1", 128, 64, ScoreSettings())


def read_parts(run: dict, paths) -> pa.Table:
    d = store.run_dir(paths.token_scores, run["model_key"], run["corpus"], run["run_id"])
    return store.read_parts(d)


def run_json(run: dict, paths) -> dict:
    d = store.run_dir(paths.token_scores, run["model_key"], run["corpus"], run["run_id"])
    return json.loads((d / "_run.json").read_text())


def test_scored_run_records_end_of_text_and_a_new_rule_is_a_new_run(tmp_paths, mirror, tiny_gpt2_dir, monkeypatch):
    texts = ucl_sentences(mirror, 3)
    write_documents(tmp_paths, "ucl", texts)
    settings = ScoreSettings(top_k=0, device="cpu", dtype="float32")
    [run] = score_corpora(tmp_paths, str(tiny_gpt2_dir), ["ucl"], settings, show_progress=False)
    rec = run_json(run, tmp_paths)
    assert rec["scorer_version"] == SCORER_VERSION == 2
    assert rec["end_of_text_ids"] == [50256] and rec["end_of_text_tokens"] == ["<|endoftext|>"]
    assert rec["bos_token_id"] == 50256 and rec["n_docs"] == 3
    t = read_parts(run, tmp_paths)
    assert t.num_rows == rec["n_tokens"] and t["logprob_word_initial_after_nats"].null_count == 0
    # the same job again: already complete, the same run
    [again] = score_corpora(tmp_paths, str(tiny_gpt2_dir), ["ucl"], settings, show_progress=False)
    assert again["status"] == "already complete" and again["run_id"] == run["run_id"]
    # a changed end-of-text rule (none here) is a new run, scored again and recorded as such
    monkeypatch.setattr(profile_module, "end_of_text_ids", lambda tokenizer: frozenset())
    [other] = score_corpora(tmp_paths, str(tiny_gpt2_dir), ["ucl"], settings, show_progress=False)
    assert other["status"] == "scored" and other["run_id"] != run["run_id"]
    rec2 = run_json(other, tmp_paths)
    assert rec2["end_of_text_ids"] == [] and rec2["end_of_text_tokens"] == [] and rec2["scorer_version"] == 2
    # same tokens and log-probabilities; only B (which no longer holds <|endoftext|>) may move
    t2 = read_parts(other, tmp_paths)
    assert t2["token_id"].to_pylist() == t["token_id"].to_pylist()
    np.testing.assert_allclose(t2["logprob_nats"].to_numpy(), t["logprob_nats"].to_numpy(), rtol=0, atol=0)
    assert (t2["logprob_word_initial_nats"].to_numpy() <= t["logprob_word_initial_nats"].to_numpy() + 1e-6).all()


def test_smollm2_tokenizer_run_records_endoftext_and_b_at_the_end(tmp_paths, mirror, tmp_path):
    """A tiny Llama with SmolLM2's real tokenizer, scored by the pipeline: `_run.json` records
    <|endoftext|> (0), not <|im_end|>; the stored ln B after each document's last token (the end of the
    text) equals our own forward pass: mass on whitespace-first ids + id 0, at the position after it."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    d = build_tiny_llama(tmp_path / "tiny-llama")
    texts = ucl_sentences(mirror, 3)
    write_documents(tmp_paths, "ucl", texts)
    [run] = score_corpora(
        tmp_paths, str(d), ["ucl"], ScoreSettings(top_k=0, device="cpu", dtype="float32"), show_progress=False
    )
    rec = run_json(run, tmp_paths)
    assert rec["end_of_text_ids"] == [0] and rec["end_of_text_tokens"] == ["<|endoftext|>"]
    assert rec["bos_token_id"] == 0 and rec["bos_policy"] == "smollm2-endoftext" and rec["scorer_version"] == 2
    t = read_parts(run, tmp_paths).to_pandas()
    model = AutoModelForCausalLM.from_pretrained(d, dtype=torch.float32).eval()
    tok = AutoTokenizer.from_pretrained(d)
    mask = torch.tensor([tok.decode([i], clean_up_tokenization_spaces=False)[:1].isspace() for i in range(len(tok))])
    mask[0] = True
    for doc_id, text in zip(("1", "2", "3"), texts):
        ids = tok(text, add_special_tokens=False)["input_ids"]
        rows = t[t.doc_id == doc_id].sort_values("token_index")
        assert rows.token_id.tolist() == ids
        with torch.no_grad():
            lp = torch.log_softmax(model(torch.tensor([[0] + ids])).logits[0].double(), -1)
        ln_b = torch.logsumexp(lp.masked_fill(~mask, float("-inf")), -1).numpy()
        np.testing.assert_allclose(rows.logprob_word_initial_nats.to_numpy(), ln_b[:-1], rtol=0, atol=5e-5)
        np.testing.assert_allclose(rows.logprob_word_initial_after_nats.to_numpy(), ln_b[1:], rtol=0, atol=5e-5)
