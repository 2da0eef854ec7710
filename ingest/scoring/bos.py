"""Beginning-of-sequence policy: which single token every scored window starts with.

Texts are tokenized with ``add_special_tokens=False`` and exactly one BOS id is
prepended (never two: a text whose tokens already start with that id keeps it as
its BOS; ``predictabase.ingest.scoring.profile.encode``). The policy is part of the model's
``TokenizerProfile``. The id is chosen per model family:

* GPT-2 / GPT-Neo / GPT-J / Pythia (GPT-NeoX) and other models trained on
  ``<|endoftext|>``-separated documents -> ``<|endoftext|>`` (policy ``endoftext``).
* SmolLM2, and any llama-architecture model whose tokenizer has ``<|endoftext|>``
  at id 0 while declaring ``<|im_start|>`` (a chat-turn marker) as its BOS ->
  id 0 ``<|endoftext|>`` (policy ``smollm2-endoftext``). SmolLM2 was pre-trained
  on ``<|endoftext|>``-separated documents; the GGUF's declared BOS is a chat
  token. Measured here (SmolLM2-135M-Instruct Q4_1 GGUF, fp32, CPU, the first
  30 distinct UCL sentences of ucl_devarda/all_measures.csv, 352 tokens incl. the
  first): mean log-prob -4.796 nats/token with id 0 ``<|endoftext|>`` vs -5.351
  with id 1 ``<|im_start|>`` (and -4.923 on the 322 tokens after the first with
  no BOS at all). ``bench/score.py --bos-evidence`` re-measures it.
* Llama / Gemma / Mistral and anything else with a declared BOS ->
  ``tokenizer.bos_token_id`` (``<s>``, Gemma ``<bos>`` = 2) (policy ``tokenizer-bos``).
* No declared BOS but an ``<|endoftext|>`` or EOS token -> that token
  (policy ``endoftext`` / ``eos-as-bos``).
"""

from __future__ import annotations

from dataclasses import dataclass

ENDOFTEXT = "<|endoftext|>"
ENDOFTEXT_FAMILIES = {"gpt2", "gpt_neo", "gpt_neox", "gptj", "codegen", "gpt_bigcode", "gpt_neox_japanese"}
LLAMA_ARCH = {"llama", "mistral", "qwen2", "qwen3", "phi3", "olmo", "olmo2"}


@dataclass(frozen=True)
class BosPolicy:
    policy: str
    token_id: int
    token: str


def _token_id(tokenizer, token: str) -> int | None:
    vocab = tokenizer.get_vocab()
    return vocab.get(token)


def choose_bos(tokenizer, model_type: str | None) -> BosPolicy:
    """The BOS policy for a tokenizer and the model's ``config.model_type``."""
    model_type = (model_type or "").lower()
    eot = _token_id(tokenizer, ENDOFTEXT)
    if model_type in ENDOFTEXT_FAMILIES and eot is not None:
        return BosPolicy("endoftext", eot, ENDOFTEXT)
    if model_type in LLAMA_ARCH and eot == 0 and tokenizer.bos_token == "<|im_start|>":
        return BosPolicy("smollm2-endoftext", 0, ENDOFTEXT)
    if tokenizer.bos_token_id is not None:
        return BosPolicy("tokenizer-bos", int(tokenizer.bos_token_id), str(tokenizer.bos_token))
    if eot is not None:
        return BosPolicy("endoftext", eot, ENDOFTEXT)
    if tokenizer.eos_token_id is not None:
        return BosPolicy("eos-as-bos", int(tokenizer.eos_token_id), str(tokenizer.eos_token))
    raise ValueError("the tokenizer declares no BOS, <|endoftext|> or EOS token to start sequences with")
