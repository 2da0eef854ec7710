"""Which tokens end a plain text? Evidence for the end-of-text ids of the word-boundary mass B.

    python bench/end_of_text.py [--model smollm2-135m] [--ucl 205]

For every Natural Story (10) and UCL sentence (205), scored as the scorer does (BOS, one window),
it prints the mean probability the model gives each special token that could count as
end-of-text, (a) at the end of the complete text, where a document separator is the right next
token, and (b) over all positions inside the texts, where any such token is wrong; and how much
counting each of them moves ln B (the word-boundary mass) at the positions inside the texts.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from predictabase.core.config import paths as get_paths  # noqa: E402
from predictabase.ingest.scoring.models import load_model  # noqa: E402
from predictabase.ingest.scoring.profile import TokenizerProfile  # noqa: E402
from tests.scoring_helpers import natural_stories, ucl_sentences  # noqa: E402

MIRROR = Path(os.environ.get("PREDICTABASE_MIRROR", ROOT.parent / "shared" / "data"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--ucl", type=int, default=205)
    args = ap.parse_args()
    lm = load_model(args.model, get_paths(), None, None)
    tok = lm.tokenizer
    profile = TokenizerProfile.build(tok, lm.model_type, lm.vocab_size, args.model)
    specials = sorted(profile.special_ids | profile.end_of_text_ids)
    names = tok.convert_ids_to_tokens(specials)
    texts = {"natural_stories": list(natural_stories(MIRROR).values()), "ucl": ucl_sentences(MIRROR, args.ucl)}
    spaced = profile.word_initial.copy()
    spaced[list(profile.end_of_text_ids)] = False  # word-initial tokens only
    print(
        f"model {lm.model_id}  BOS {profile.bos.token} ({profile.bos.token_id})  declared EOS "
        f"{tok.eos_token} ({tok.eos_token_id})"
    )
    print(
        "| corpus | token | id | mean p at the end of a text | mean p inside texts | max shift of ln B inside (nats) |"
    )
    print("|---|---|---|---|---|---|")
    for corpus, docs in texts.items():
        end_p = {i: [] for i in specials}
        in_p = {i: [] for i in specials}
        shift = {i: 0.0 for i in specials}
        for text in docs:
            ids = tok(text, add_special_tokens=False)["input_ids"]
            with torch.inference_mode():
                lp = torch.log_softmax(lm.model(torch.tensor([[profile.bos.token_id] + ids])).logits[0].float(), -1)
            p = lp.exp().numpy().astype(np.float64)
            b_words = p[:-1][:, spaced].sum(axis=1)  # positions inside: before each real token
            for i in specials:
                end_p[i].append(p[-1, i])
                in_p[i].append(p[:-1, i].mean())
                shift[i] = max(shift[i], float(np.max(np.log(b_words + p[:-1, i]) - np.log(b_words))))
        for i, name in zip(specials, names):
            print(f"| {corpus} | `{name}` | {i} | {np.mean(end_p[i]):.2e} | {np.mean(in_p[i]):.2e} | {shift[i]:.4f} |")


if __name__ == "__main__":
    main()
