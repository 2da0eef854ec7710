"""BOS policy for three tokenizer families: exactly one BOS, never doubled, first token conditioned on it."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from ingest.scoring.bos import choose_bos, encode
from ingest.scoring.engine import Scorer, eos_ids, make_windows, vocab_strings, word_initial_mask
from ingest.scoring.models import smollm2_gguf
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
    strings = vocab_strings(tok, len(tok))
    mask = word_initial_mask(tok, strings, eos_ids(tok))
    vocab = tok.get_vocab()
    assert mask[vocab["Ġthe"]] and mask[vocab["Ċ"]] and not mask[vocab["the"]] and mask[0]
    assert not mask[vocab["<|im_start|>"]]


@pytest.fixture(scope="module")
def sentencepiece_tokenizer(mirror):
    """A Llama-style SentencePiece (Metaspace `▁`) tokenizer trained offline on UCL sentences."""
    from tokenizers import SentencePieceBPETokenizer
    from transformers import PreTrainedTokenizerFast
    sp = SentencePieceBPETokenizer()
    sp.train_from_iterator(ucl_sentences(mirror, 200), vocab_size=400, special_tokens=["<unk>", "<s>", "</s>"])
    return PreTrainedTokenizerFast(tokenizer_object=sp._tokenizer, bos_token="<s>", eos_token="</s>",
                                   unk_token="<unk>")


def test_llama_style_sentencepiece_uses_declared_bos(sentencepiece_tokenizer, mirror):
    tok = sentencepiece_tokenizer
    for family in ("llama", "gemma3_text", "mistral"):
        bos = choose_bos(tok, family)
        assert (bos.policy, bos.token_id, bos.token) == ("tokenizer-bos", 1, "<s>")
    check_encoding(tok, choose_bos(tok, "llama"), ucl_sentences(mirror, 5))
    strings = vocab_strings(tok, len(tok))
    mask = word_initial_mask(tok, strings, eos_ids(tok))
    want = np.array([s.startswith("\u2581") for s in strings])
    want[tok.eos_token_id] = True
    np.testing.assert_array_equal(mask, want)


def test_first_token_is_scored_conditioned_on_bos(mirror):
    """Scorer level: the first real token's log-prob is p(token | BOS), context 0, BOS never scored."""
    from transformers import GPT2Config, GPT2LMHeadModel
    tok = gpt2_tokenizer()
    torch.manual_seed(1)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_positions=32, n_embd=32, n_layer=1, n_head=2)).eval()
    bos = choose_bos(tok, "gpt2")
    [(ids, _)] = encode(tok, ucl_sentences(mirror, 1), bos)
    scorer = Scorer(model, tok, bos.token_id, top_k=3)
    res = scorer.score_windows([ids], [make_windows(0, len(ids), 32, 16)])[0]
    with torch.no_grad():
        lp = torch.log_softmax(model(torch.tensor([[50256]])).logits[0, 0].float(), -1)
    assert abs(res["lp"][0] - lp[ids[0]].item()) < 1e-5 and res["ctx"][0] == 0
    assert len(res["lp"]) == len(ids)
