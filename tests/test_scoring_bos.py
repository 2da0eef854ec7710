"""Tokenizer profiles for three tokenizer families: BOS policy (exactly one BOS, never doubled, first token
conditioned on it), end-of-text ids, byte-level vs SentencePiece, the word-initial mask; span tiling."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from predictabase.ingest.scoring.bos import choose_bos
from predictabase.ingest.scoring.engine import Scorer, make_windows
from predictabase.ingest.scoring.models import smollm2_gguf
from predictabase.ingest.scoring.profile import InvariantError, TokenizerProfile, check_spans_tile, encode
from tests.scoring_helpers import gpt2_tokenizer, ucl_sentences


def check_encoding(tok, bos, texts):
    enc = encode(tok, texts, bos)
    for text, (ids, spans) in zip(texts, enc):
        assert bos.token_id not in ids[:1]
        assert ids == [i for i in tok(text, add_special_tokens=False)["input_ids"]]
        assert "".join(text[s:e] for s, e in spans) == text
    # a text that already starts with the BOS keeps a single one
    ids, spans = encode(tok, [bos.token + texts[0]], bos)[0]
    assert ids == enc[0][0] and spans[0][0] == 0


def test_gpt2_family_uses_endoftext(mirror):
    tok = gpt2_tokenizer()
    for family in ("gpt2", "gpt_neo", "gpt_neox"):
        bos = choose_bos(tok, family)
        assert (bos.policy, bos.token_id, bos.token) == ("endoftext", 50256, "<|endoftext|>")
    check_encoding(tok, choose_bos(tok, "gpt2"), ucl_sentences(mirror, 5))


@pytest.fixture(scope="module")
def smollm2_tokenizer():
    from transformers import AutoTokenizer

    gguf = smollm2_gguf()
    return AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)


def test_smollm2_uses_endoftext_id0_not_declared_im_start(smollm2_tokenizer, mirror):
    tok = smollm2_tokenizer
    assert tok.bos_token == "<|im_start|>"  # what the GGUF declares
    bos = choose_bos(tok, "llama")
    assert (bos.policy, bos.token_id, bos.token) == ("smollm2-endoftext", 0, "<|endoftext|>")
    check_encoding(tok, bos, ucl_sentences(mirror, 5))
    profile = TokenizerProfile.build(tok, "llama", len(tok), "smollm2-135m")
    assert profile.bos == bos and profile.byte_level and profile.kind == "byte-level BPE"
    # end-of-text is the pre-training document separator <|endoftext|> (0), not the declared EOS
    # <|im_end|> (2), a chat end-of-turn marker
    assert tok.eos_token == "<|im_end|>" and tok.convert_ids_to_tokens(2) == "<|im_end|>"
    assert profile.end_of_text_ids == {0}
    mask = profile.word_initial
    vocab = tok.get_vocab()
    assert mask[vocab["Ġthe"]] and mask[vocab["Ċ"]] and not mask[vocab["the"]] and mask[0] and not mask[2]
    assert not mask[vocab["<|im_start|>"]]
    assert list(profile.strings) == tok.convert_ids_to_tokens(list(range(len(tok))))


@pytest.fixture(scope="module")
def sentencepiece_tokenizer(mirror):
    """A Llama-style SentencePiece (Metaspace `▁`) tokenizer trained offline on UCL sentences."""
    from tokenizers import SentencePieceBPETokenizer
    from transformers import PreTrainedTokenizerFast

    sp = SentencePieceBPETokenizer()
    sp.train_from_iterator(ucl_sentences(mirror, 200), vocab_size=400, special_tokens=["<unk>", "<s>", "</s>"])
    return PreTrainedTokenizerFast(tokenizer_object=sp._tokenizer, bos_token="<s>", eos_token="</s>", unk_token="<unk>")


def test_llama_style_sentencepiece_uses_declared_bos(sentencepiece_tokenizer, mirror):
    tok = sentencepiece_tokenizer
    for family in ("llama", "gemma3_text", "mistral"):
        bos = choose_bos(tok, family)
        assert (bos.policy, bos.token_id, bos.token) == ("tokenizer-bos", 1, "<s>")
    check_encoding(tok, choose_bos(tok, "llama"), ucl_sentences(mirror, 5))
    profile = TokenizerProfile.build(tok, "llama", len(tok) + 3, "sp-test")  # LM head rows past the vocabulary
    assert not profile.byte_level and profile.end_of_text_ids == {tok.eos_token_id}
    assert list(profile.strings[len(tok) :]) == [None] * 3
    want = np.array([s is not None and s.startswith("\u2581") for s in profile.strings])
    want[tok.eos_token_id] = True
    np.testing.assert_array_equal(profile.word_initial, want)


def test_first_token_is_scored_conditioned_on_bos(mirror):
    """Scorer level: the first real token's log-prob is p(token | BOS), context 0, BOS never scored."""
    from transformers import GPT2Config, GPT2LMHeadModel

    tok = gpt2_tokenizer()
    torch.manual_seed(1)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_positions=32, n_embd=32, n_layer=1, n_head=2)).eval()
    profile = TokenizerProfile.build(tok, "gpt2", len(tok), "tiny")
    [(ids, _)] = profile.encode(ucl_sentences(mirror, 1))
    scorer = Scorer(model, profile, top_k=3)
    res = scorer.score_windows([ids], [make_windows(0, len(ids), 32, 16)])[0]
    with torch.no_grad():
        lp = torch.log_softmax(model(torch.tensor([[50256]])).logits[0, 0].float(), -1)
    assert abs(res["logprob_nats"][0] - lp[ids[0]].item()) < 1e-5 and res["context_tokens"][0] == 0
    assert len(res["logprob_nats"]) == len(ids)
    assert set(res) == {
        "logprob_nats",
        "rank",
        "entropy_nats",
        "logprob_word_initial_nats",
        "topk_logprobs_nats",
        "topk_token_ids",
        "context_tokens",
        "logprob_word_initial_after_nats",
    }


def test_gpt2_profile_mask_decodes_every_vocabulary_item():
    """Byte-level: the mask is exactly the items whose decoded text starts with whitespace, plus <|endoftext|>."""
    tok = gpt2_tokenizer()
    profile = TokenizerProfile.build(tok, "gpt2", len(tok), "gpt2")
    assert profile.byte_level and profile.end_of_text_ids == {50256} and profile.bos.token_id == 50256
    want = np.array([tok.decode([i])[:1].isspace() for i in range(len(tok))])
    want[50256] = True
    np.testing.assert_array_equal(profile.word_initial, want)


def test_spans_that_do_not_tile_name_the_model():
    text = "one two three"
    check_spans_tile([(0, 3), (3, 7), (7, 13)], text, "m")
    check_spans_tile([], "", "m")
    for spans, what in (
        ([(0, 3), (4, 13)], "tile"),
        ([(0, 5), (3, 13)], "tile"),
        ([(1, 13)], "tile"),
        ([(0, 3), (3, 12)], "cover"),
        ([(0, 14)], "cover"),
    ):
        with pytest.raises(InvariantError, match=f"^my-model: .*{what}"):
            check_spans_tile(spans, text, "my-model")

    class BadOffsets:  # a tokenizer whose offsets run past the text
        def __call__(self, texts, **kw):
            return {"input_ids": [[5, 6]], "offset_mapping": [[(0, len(texts[0]) + 2), (3, len(texts[0]) + 3)]]}

    bos = choose_bos(gpt2_tokenizer(), "gpt2")
    with pytest.raises(InvariantError, match=r"^my-model: token 1 spans characters \[15, 13\) .*tile"):
        encode(BadOffsets(), [text], bos, "my-model")


def test_probe_catches_a_scorer_that_disagrees_with_the_model(tiny_gpt2_dir):
    """At load, the scorer's log-probabilities of a probe text must sum to -n * the model's own loss."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_gpt2_dir, dtype=torch.float32).eval()
    profile = TokenizerProfile.build(gpt2_tokenizer(), "gpt2", len(gpt2_tokenizer()), "tiny-gpt2")
    assert abs(Scorer(model, profile, top_k=3).check_probe()) < 1e-3

    class OffByOne(Scorer):  # the logits of the previous position: a shifted-targets bug
        def _position_logits(self, input_ids, attention_mask, rows, cols):
            return super()._position_logits(input_ids, attention_mask, rows, (cols - 1).clamp(min=0))

    with pytest.raises(InvariantError, match="^tiny-gpt2: on the probe text .* the model's own loss"):
        OffByOne(model, profile, top_k=3)
    with pytest.raises(InvariantError, match="^tiny-gpt2: the LM head has 50257 rows"):
        Scorer(model, TokenizerProfile.build(gpt2_tokenizer(), "gpt2", 50300, "tiny-gpt2"))
