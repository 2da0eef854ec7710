"""Regenerate ingest/sources/catalog.toml from a verified local mirror (maintainer tool).

The catalog is the project's record of every upstream file: repository, commit,
path, sha256, license, citation and the dataset it feeds. Run this only after
checking a new mirror by hand; `predictabase fetch` then verifies every file
against the hashes written here.

    python scripts/make_catalog.py ../shared/data > ingest/sources/catalog.toml
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

# mirror folder -> (repo, commit, upstream path prefix, license, citation)
REPOS = {
    "lm_game/analysis": dict(
        repo="FabienRoger/lm-game-analysis-main",
        commit="171837dfa7b95008fc401b6390b3fb0f3333bae4",
        prefix="",
        license="none stated",
        citation="Shlegeris, Roger, Chan & McLean. Language Models Are Better Than Humans at Next-token Prediction. TMLR 2024.",
    ),
    "lm_game/server": dict(
        repo="bshlgrs/lm-game",
        commit="f3ba57f5182df8b56877371efae561b863a69f21",
        prefix="",
        license="none stated",
        citation="Shlegeris, Roger, Chan & McLean. Language Models Are Better Than Humans at Next-token Prediction. TMLR 2024.",
    ),
    "in_the_wild": dict(
        repo="PabloAMC/LM_AAAI22",
        commit="2cc54297edf37c3a218020e0486076e493d5078b",
        prefix="",
        license="none stated; encrypted upstream to keep prompts out of LM training data (decrypt in memory only)",
        citation="Casares et al. How General-Purpose Is a Language Model? Usefulness and Safety with Human Prompters in the Wild. AAAI-22.",
    ),
    "natural_stories": dict(
        repo="languageMIT/naturalstories",
        commit="4700daad696e942f5aba23c957a7423d0de66612",
        prefix="",
        license="CC BY-NC-SA 4.0",
        citation="Futrell et al. The Natural Stories corpus: a reading-time corpus of English texts containing rare syntactic constructions. LRE 55, 2021.",
    ),
    "pangoling": dict(
        repo="bnicenboim/pangoling",
        commit="d9b82f4f14cba4f6a6e38ad61bb8ea857ebcf0ff",
        prefix="data/",
        license="package MIT; Provo CC BY 4.0, Natural Stories CC BY-NC-SA 4.0, UCL none stated",
        citation="Nicenboim. pangoling (R package); Luke & Christianson 2018; Futrell et al. 2021; Frank et al. 2013.",
    ),
    "provo_vasilev": dict(
        repo="martin-vasilev/Provo_corpus",
        commit="736e69b1e5a0444ceb81787b789a0e375c063b89",
        prefix="",
        license="none stated; Provo itself CC BY 4.0",
        citation="Luke & Christianson. The Provo Corpus: A large eye-tracking corpus with predictability norms. BRM 50, 2018.",
    ),
    "ucl_devarda": dict(
        repo="Andrea-de-Varda/prediction-resource",
        commit="7162734da00a9a3c81d5ebaec65bdf6d59e931fc",
        prefix="",
        license="none stated",
        citation="de Varda, Marelli & Amenta. Cloze probability, predictability ratings, and computational estimates for 205 English sentences. BRM 2023; Frank et al. 2013, 2015.",
    ),
}

# which dataset each file feeds (first matching prefix of the mirror path wins)
DATASETS = [
    ("lm_game/analysis/results_raw/res_accuracy", "lm_game_top1"),
    ("lm_game/analysis/results_raw/res_loss", "lm_game_pairwise"),
    ("lm_game/analysis/results_raw/model_perfs", "lm_game_model_perfs"),
    ("lm_game/server/docs/", "corpus_lm_game"),
    ("lm_game/server/multi_comparisons/", "lm_game_pairwise"),
    ("lm_game/server/tokens.json", "lm_game_vocabulary"),
    ("in_the_wild/encoded", "in_the_wild"),
    ("natural_stories/naturalstories_RTS/all_stories.tok", "corpus_natural_stories"),
    ("natural_stories/naturalstories_RTS/processed_wordinfo", "natural_stories_spr_means"),
    ("natural_stories/probs/all_stories_gpt3", "logprobs_gpt3_natural_stories"),
    ("natural_stories/words.tsv", "natural_stories_words"),
    ("natural_stories/freqs/", "natural_stories_freqs"),
    ("pangoling/data_natural_spr", "natural_stories_spr"),
    ("pangoling/data_provo_cloze", "provo_cloze"),
    ("pangoling/data_frank2013_et_rt", "ucl_eye_tracking"),
    ("pangoling/data_frank2013_et_fix", "ucl_fixations"),
    ("pangoling/data_frank2013_spr", "ucl_spr"),
    ("pangoling/data_frank2013_stimuli", "ucl_stimuli"),
    ("provo_vasilev/data/df.Rda", "provo_eye_tracking"),
    ("provo_vasilev/corpus/Texts/", "corpus_provo"),
    ("provo_vasilev/corpus/text_coords", "provo_word_boxes"),
    ("ucl_devarda/all_measures.csv", "corpus_ucl"),
    ("ucl_devarda/cloze_distributions/", "ucl_cloze_distributions"),
    ("ucl_devarda/ratings_and_cloze", "ucl_cloze"),
    ("ucl_devarda/item-set", "ucl_items"),
    ("ucl_devarda/supplementary_materials/", "ucl_published_results"),
]


def dataset_of(rel: str) -> str:
    for prefix, name in DATASETS:
        if rel.startswith(prefix):
            return name
    return "documentation"


def main(mirror: str) -> None:
    root = Path(mirror)
    out = ["# Generated by scripts/make_catalog.py from a hand-checked mirror. One [[file]] per upstream file.",
           "# url = https://raw.githubusercontent.com/{repo}/{commit}/{upstream_path}", ""]
    for folder, meta in REPOS.items():
        out += ["[[repo]]", f'folder = "{folder}"']
        out += [f'{k} = "{v}"' for k, v in meta.items()]
        out.append("")
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.name != "SOURCES.md"):
        rel = path.relative_to(root).as_posix()
        folder = next(f for f in REPOS if rel.startswith(f + "/"))
        upstream = REPOS[folder]["prefix"] + rel[len(folder) + 1:]
        sha = hashlib.sha256(path.read_bytes()).hexdigest()
        out += ["[[file]]", f'path = "{rel}"', f'repo_folder = "{folder}"', f'upstream_path = "{upstream}"',
                f'sha256 = "{sha}"', f"bytes = {path.stat().st_size}", f'dataset = "{dataset_of(rel)}"', ""]
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/data")
