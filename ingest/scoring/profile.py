"""One tokenizer profile per model: everything the scorer needs to know about a tokenizer,
worked out once when the model loads.

`TokenizerProfile.build` decides

* the BOS policy (`predictabase.ingest.scoring.bos.choose_bos`): the single id every scored window starts with;
* the end-of-text ids (`end_of_text_ids`): the document separator the model was pre-trained with,
  never a chat end-of-turn marker (SmolLM2-Instruct declares `<|im_end|>` as EOS; it does not count);
* byte-level BPE (GPT-2, SmolLM2: vocabulary strings are bytes through GPT-2's byte -> character
  table, `transformers`' own `bytes_to_unicode`) or SentencePiece style (Llama, Gemma: `▁` for a
  space, byte-fallback tokens `<0x0A>`);
* the vocabulary string of every id the LM head scores (None past the tokenizer's vocabulary);
* the word-initial mask: ids whose text begins with whitespace, plus the end-of-text ids
  (`logprob_word_initial_nats` is the log of the predicted mass on them).

`TokenizerProfile.encode` tokenizes texts and checks that the token spans tile each text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from predictabase.core.errors import ModelLoadError, ScoringError
from predictabase.ingest.scoring.bos import ENDOFTEXT, BosPolicy, choose_bos
from predictabase.ingest.scoring.word_boundaries import word_initial_mask


class InvariantError(ScoringError):
    """Something the scorer relies on does not hold for this model; names the model."""


def is_byte_level(tokenizer) -> bool:
    """Byte-level BPE: the fast tokenizer's decoder or pre-tokenizer is ByteLevel."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return False
    for part in (backend.decoder, backend.pre_tokenizer):
        if part is not None and "ByteLevel" in repr(part):
            return True
    return False


def vocab_strings(tokenizer, vocab_size: int) -> list[str | None]:
    """The vocabulary string of ids 0 .. vocab_size - 1 (None for LM-head rows past the tokenizer)."""
    toks = tokenizer.convert_ids_to_tokens(list(range(min(vocab_size, len(tokenizer)))))
    return list(toks) + [None] * (vocab_size - len(toks))


# The pre-training document separators, in order of preference, and the chat end-of-turn markers that
# never end a plain text (ChatML, Gemma, Llama 3, Phi-3).
DOCUMENT_SEPARATORS = (ENDOFTEXT, "<|end_of_text|>")
EOS_SEPARATORS = ("<eos>", "</s>")  # Gemma, Llama 2 / Mistral: when the declared EOS is a chat turn end
CHAT_TURN_ENDS = frozenset({"<|im_end|>", "<end_of_turn>", "<|eot_id|>", "<|end|>", "<|eom_id|>"})


def end_of_text_ids(tokenizer) -> frozenset[int]:
    """The id that ends a plain text: the document separator the model was pre-trained with.

    `<|endoftext|>` (GPT-2, GPT-Neo, Pythia, SmolLM2) or `<|end_of_text|>` (Llama 3) when the
    vocabulary has one; else the declared EOS (`</s>` Llama 2 / Mistral, `<eos>` Gemma), unless
    that is a chat end-of-turn marker (`CHAT_TURN_ENDS`): then `<eos>` or `</s>` when the vocabulary
    has one (an instruct tokenizer declaring `<end_of_turn>` keeps its base model's `<eos>`), else none. A chat turn end is not the end of a plain
    text: the texts are scored as documents after the separator (the BOS policy), not inside a
    chat template, so the same separator ends them. Evidence
    (`bench/end_of_text.py`): SmolLM2-135M-Instruct declares `<|im_end|>` as EOS; counting it moves
    ln B by up to 0.075 nats inside Natural Stories texts, where no text ends.
    """
    vocab = tokenizer.get_vocab()
    for sep in DOCUMENT_SEPARATORS:
        if sep in vocab:
            return frozenset({int(vocab[sep])})
    eos, eos_id = tokenizer.eos_token, tokenizer.eos_token_id
    if eos_id is not None and str(eos) not in CHAT_TURN_ENDS:
        return frozenset({int(eos_id)})
    for sep in EOS_SEPARATORS:  # an instruct tokenizer declaring its turn end keeps the base model's EOS
        if sep in vocab:
            return frozenset({int(vocab[sep])})
    return frozenset()


def special_ids(tokenizer) -> frozenset[int]:
    """Declared special tokens and added tokens marked special."""
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    added = getattr(tokenizer, "added_tokens_decoder", {}) or {}
    special |= {int(i) for i, t in added.items() if getattr(t, "special", False)}
    return frozenset(int(i) for i in special)


def check_spans_tile(spans: list[tuple[int, int]], text: str, name: str) -> None:
    """Spans must tile the text: the first starts at 0, each starts where the previous ended, none
    runs backwards, the last ends at len(text)."""
    prev = 0
    for k, (s, e) in enumerate(spans):
        if s != prev or e < s:
            raise InvariantError(
                name,
                f"token {k} spans characters [{s}, {e}) after a token that ended at "
                f"{prev}: token spans must tile the text ({text[:60]!r})",
            )
        prev = e
    if spans and prev != len(text):
        raise InvariantError(
            name, f"token spans end at character {prev} of {len(text)}: they must cover the whole text ({text[:60]!r})"
        )


def encode(
    tokenizer, texts: list[str], bos: BosPolicy, name: str = "tokenizer"
) -> list[tuple[list[int], list[tuple[int, int]]]]:
    """Tokenize texts: real-token ids and char spans that tile each text (BOS not included).

    Spans: end = the tokenizer's offset end (made monotonic), start = the previous end, so leading
    spaces that ByteLevel offsets trim belong to the token that carries them, and byte-fallback
    tokens splitting one character get a valid (possibly empty) span. The last span is extended to
    the end of the text. If a text's first token already is the BOS id, it is used as the BOS and
    not returned (no doubled BOS); its characters fall into the first real token's span. A text
    without tokens gets no spans.
    """
    if not texts:
        return []
    enc = tokenizer(texts, add_special_tokens=False, return_offsets_mapping=True)
    out = []
    for text, ids, offs in zip(texts, enc["input_ids"], enc["offset_mapping"]):
        ids = list(ids)
        offs = list(offs)
        if ids and ids[0] == bos.token_id:
            ids, offs = ids[1:], offs[1:]
        spans = []
        prev = 0
        for _, end in offs:
            end = max(int(end), prev)
            spans.append((prev, end))
            prev = end
        if spans and spans[-1][1] != len(text):
            spans[-1] = (spans[-1][0], len(text))
        check_spans_tile(spans, text, name)
        out.append((ids, spans))
    return out


@dataclass(frozen=True, eq=False)
class TokenizerProfile:
    name: str  # the model as the user named it (errors name it)
    tokenizer: object
    model_type: str
    vocab_size: int  # rows of the LM head (can exceed the tokenizer's vocabulary)
    bos: BosPolicy
    byte_level: bool  # byte-level BPE; else SentencePiece style (`▁`, `<0xNN>`)
    end_of_text_ids: frozenset[int]
    special_ids: frozenset[int]
    strings: np.ndarray  # object [vocab_size]: vocabulary string per id, None past the tokenizer
    word_initial: np.ndarray  # bool [vocab_size]

    @classmethod
    def build(cls, tokenizer, model_type: str | None, vocab_size: int, name: str) -> TokenizerProfile:
        try:
            bos = choose_bos(tokenizer, model_type)
        except ValueError as exc:
            raise ModelLoadError(name, str(exc)) from exc
        byte_level = is_byte_level(tokenizer)
        eot = end_of_text_ids(tokenizer)
        special = special_ids(tokenizer)
        strings = vocab_strings(tokenizer, vocab_size)
        mask = word_initial_mask(strings, byte_level, special, eot)
        return cls(
            name=name,
            tokenizer=tokenizer,
            model_type=str(model_type or ""),
            vocab_size=int(vocab_size),
            bos=bos,
            byte_level=byte_level,
            end_of_text_ids=eot,
            special_ids=special,
            strings=np.array(strings, dtype=object),
            word_initial=mask,
        )

    @property
    def kind(self) -> str:
        return "byte-level BPE" if self.byte_level else "SentencePiece (▁, byte fallback)"

    def encode(self, texts: list[str]) -> list[tuple[list[int], list[tuple[int, int]]]]:
        return encode(self.tokenizer, texts, self.bos, self.name)
