"""The "Word surprisal" page (Oh & Schuler 2024: leading-whitespace LW vs whitespace-trailing WT word surprisal) against
the real warehouse of the session (conftest.real_warehouse: UCL scored by the tiny GPT-2, the GPT-3 davinci import
on Natural Stories; dbt built and published), and against a copy of it with the UCL word surprisals precomputed
upstream ingested too. Every number the tests expect is queried from the published marts, or, for the sentence
box, computed by a SentenceScorer built directly from the tiny GPT-2. AppTest for the values; one real-browser
test (Debian's chromium through Playwright) for the served page.
"""

from __future__ import annotations

import html
import json
import math
import re
import shutil
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from tests.helpers import marts_q as q

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "dashboards" / "app_pages" / "word_surprisal.py"
AMBIGUOUS = "When the dog scratched the vet with his new assistant took off the muzzle."
UNAMBIGUOUS = "When the dog scratched, the vet with his new assistant took off the muzzle."
# mart_word_surprisal_summary's columns: none may be a header of the page's tables
SUMMARY_COLUMNS = {
    "corpus",
    "model_key",
    "model_id",
    "run_id",
    "run_source",
    "definitions",
    "end_of_text_tokens",
    "n_words",
    "n_aligned_words",
    "n_unaligned_words",
    "n_words_with_wt",
    "share_multitoken",
    "mean_surprisal_lw_bits",
    "mean_surprisal_wt_bits",
    "mean_wt_minus_lw_bits",
    "mean_abs_wt_minus_lw_bits",
    "share_moved_over_1_bit",
    "words_moving_most",
    "max_text_telescoping_error_nats",
}
LW_BITS, WT_BITS, DIFF_BITS = "LW surprisal (bits)", "WT surprisal (bits)", "WT − LW (bits)"


# --------------------------------------------------------------------------------------------
# fixtures and helpers


@pytest.fixture(scope="module")
def with_ucl_imports(real_warehouse_ucl_imports):
    """A copy of the real warehouse with the UCL word surprisals precomputed upstream (GPT-2, GPT-Neo) ingested,
    the word marts rebuilt and published (tests/conftest.py, once a session; tests/test_word_surprisal.py reads
    it too)."""
    return real_warehouse_ucl_imports


def _app(warehouse: Path, monkeypatch):
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    st.cache_data.clear()
    st.cache_resource.clear()  # the sentence box's models: each test loads its own
    monkeypatch.setenv("PREDICTABASE_WAREHOUSE", str(warehouse))
    monkeypatch.syspath_prepend(str(ROOT / "dashboards"))
    sys.modules.pop("data", None)
    sys.modules.pop("labels", None)
    return AppTest.from_file(str(PAGE), default_timeout=120)


@pytest.fixture(scope="module")
def tiny(real_warehouse) -> str:
    """The tiny GPT-2's model key (the scorer names a model directory after itself: tiny-gpt2<n>)."""
    [(key,)] = q(real_warehouse, "select distinct model_key from mart_word_surprisal where run_source = 'scored'")
    assert key.startswith("tiny-gpt2")
    return key


@pytest.fixture
def page(real_warehouse, monkeypatch):
    return _app(real_warehouse.warehouse, monkeypatch)


def _ok(at) -> None:
    assert not at.exception, [e.message for e in at.exception]


def _df(at, first_column: str, n: int | None = None):
    """The grid whose first header is `first_column` (AppTest does not expose a grid's key)."""
    grids = [d.value for d in at.dataframe if d.value.columns[0] == first_column]
    if n is None:
        [grid] = grids
        return grid
    assert len(grids) == n, len(grids)
    return grids


def _text_block(at, legend_title: str):
    """The words of a coloured running text: [(css class, hover text, word)], the legend's bins
    {class: (low, high)} in bits and whether the legend has a "no value" swatch."""
    [md] = [m.value for m in at.markdown if f'<div class="ws-legend"><b>{html.escape(legend_title)}</b>' in m.value]
    bins = {}
    for i, label in re.findall(r'<span class="ws-b(\d)">([^<]*)</span>', md):
        label = html.unescape(label)
        bins[f"ws-b{i}"] = (
            (float(label[2:]), math.inf) if label.startswith("≥ ") else tuple(float(x) for x in label.split("–"))
        )
    words = [
        (cls, html.unescape(title), html.unescape(word))
        for cls, title, word in re.findall(r'<span class="(ws-b\d|ws-none)" title="([^"]*)">([^<]*)</span>', md)
    ]
    return words, bins, '<span class="ws-none">no value</span>' in md


def _passage(at, definition: str):
    title = {
        "wt": "WT: whitespace-trailing (corrected, Oh & Schuler 2024)",
        "lw": "LW: leading-whitespace (sum of the word's token surprisals)",
    }[definition]
    return _text_block(at, title)


def _in_bin(value: float, cls: str, bins: dict) -> bool:
    lo, hi = bins[cls]
    return lo <= value < hi or (lo == 0 and value < 0)


def _hover(word, lw, wt, diff, n_tokens) -> str:
    return (
        f"{word}\nLW {lw:.2f} bits\nWT {wt:.2f} bits\nWT − LW {diff:+.2f} bits\n"
        f"{n_tokens} token{'s' if n_tokens != 1 else ''}"
    )


def _chart(at):
    """The scatter's Vega-Lite spec and the data of its three layers: diagonal, points, labels."""
    [chart] = at.get("vega_lite_chart")
    spec = json.loads(chart.proto.spec)
    data = {d.name: pa.ipc.open_stream(d.data.data).read_all().to_pandas() for d in chart.proto.datasets}
    line, points, texts = spec["layer"]
    assert (line["mark"]["type"], points["mark"]["type"], texts["mark"]["type"]) == ("line", "circle", "text")
    return spec, data[line["data"]["name"]], data[points["data"]["name"]], data[texts["data"]["name"]]


def _tiny_parts(tiny_gpt2_dir: Path):
    """The tiny GPT-2 and its tokenizer profile, built here rather than through the page's loader."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from predictabase.ingest.scoring.profile import TokenizerProfile

    tok = AutoTokenizer.from_pretrained(str(tiny_gpt2_dir))
    model = AutoModelForCausalLM.from_pretrained(str(tiny_gpt2_dir)).eval()
    return model, TokenizerProfile.build(tok, "gpt2", model.get_output_embeddings().weight.shape[0], "tiny")


@pytest.fixture(scope="module")
def expected_sentences(tiny_gpt2_dir):
    """The two example sentences' word surprisals, from a SentenceScorer made of the tiny GPT-2's parts."""
    from predictabase.ingest.scoring.sentence import SentenceScorer

    scorer = SentenceScorer.from_parts(*_tiny_parts(tiny_gpt2_dir))
    return {t: scorer.word_surprisals(t).to_pandas() for t in (AMBIGUOUS, UNAMBIGUOUS)}


# --------------------------------------------------------------------------------------------
# the finding and the summary in words


def test_opens_with_the_finding_from_the_summary_mart(page, real_warehouse, tiny) -> None:
    at = page.run()
    _ok(at)
    assert at.title[0].value == "Word surprisal"
    # the one model with WT in this warehouse: the tiny GPT-2 on UCL
    [(share, err, n_wt, mean_diff, mean_abs, most)] = q(
        real_warehouse,
        """
        select share_moved_over_1_bit, max_text_telescoping_error_nats, n_words_with_wt, mean_wt_minus_lw_bits,
               mean_abs_wt_minus_lw_bits, words_moving_most
        from mart_word_surprisal_summary where definitions = 'LW and WT'""",
    )
    assert 0 < share < 1 and err < 1e-6
    assert at.markdown[0].value == (
        f"Under {tiny}, correcting for the trailing whitespace moves {100 * share:.1f}% of UCL words by more than 1 "
        "bit; the total surprisal of a text changes only by its final boundary."
    )
    # the default view is the corpus with a run scored here (UCL), not the first corpus (Natural Stories: GPT-3)
    assert at.selectbox(key="ws_corpus").value == "ucl" and at.selectbox(key="ws_model").value == tiny
    assert at.radio(key="ws_definition").value == "wt" and not at.warning
    assert at.markdown[1].value == (
        f"On UCL under {tiny}, WT − LW averages {mean_diff:+.5f} bits per word (mean absolute change "
        f"{mean_abs:.2f} bits); {100 * share:.1f}% of its {n_wt:,} words move by more than 1 bit. The words that move "
        f"most: {most}."
    )
    assert any("SAP benchmark" in c.value and "Examples 7 and 8" in c.value for c in at.caption)


def test_every_model_on_the_corpus_in_words(page, real_warehouse, tiny) -> None:
    at = page.run()
    _ok(at)
    t = _df(at, "model")
    assert not set(t.columns) & SUMMARY_COLUMNS and not any("_" in c for c in t.columns)
    [row] = t.to_dict("records")
    [(n, lw, wt, diff, share, multi, most)] = q(
        real_warehouse,
        """
        select n_words, mean_surprisal_lw_bits, mean_surprisal_wt_bits, mean_wt_minus_lw_bits, share_moved_over_1_bit,
               share_multitoken, words_moving_most
        from mart_word_surprisal_summary where corpus = 'ucl'""",
    )
    assert row["model"] == tiny and row["source of the run"] == "scored here: LW and WT"
    assert row["words"] == n and row["mean LW surprisal (bits/word)"] == pytest.approx(lw)
    assert row["mean WT surprisal (bits/word)"] == pytest.approx(wt)
    assert row["mean WT − LW (bits/word)"] == pytest.approx(diff)
    assert row["words moved by more than 1 bit (%)"] == pytest.approx(100 * share)
    assert row["words of more than one token (%)"] == pytest.approx(100 * multi)
    assert row["the 5 words that move most (WT − LW)"] == most


# --------------------------------------------------------------------------------------------
# the passage: running text coloured by surprisal, the toggle between the definitions


def test_passage_coloured_by_wt_then_lw(page, real_warehouse, tiny) -> None:
    at = page.run()
    _ok(at)
    # passages in numeric order, labelled with their first words
    first = q(
        real_warehouse,
        "select doc_id, string_agg(word, ' ' order by word_index), count(*) "
        f"from mart_word_surprisal where corpus = 'ucl' and model_key = '{tiny}' "
        "and doc_id in ('1', '2', '10') group by doc_id",
    )
    labels = {d: f"{d}: {w} ({n} words)" for d, w, n in first}
    options = at.selectbox(key="ws_passage").options
    assert len(options) == 205 and options[:2] == [labels["1"], labels["2"]] and options[9] == labels["10"]

    # the passage of the word the correction moves most
    [(doc, most)] = q(
        real_warehouse,
        "select doc_id, word_index from mart_word_surprisal where model_key = "
        f"'{tiny}' order by abs(surprisal_wt_minus_lw_bits) desc, doc_id, word_index "
        "limit 1",
    )
    at.selectbox(key="ws_passage").set_value(doc).run()
    _ok(at)
    rows = q(
        real_warehouse,
        f"""
        select word, surprisal_lw_bits, surprisal_wt_bits, surprisal_wt_minus_lw_bits, n_tokens
        from mart_word_surprisal where corpus = 'ucl' and model_key = '{tiny}' and doc_id = '{doc}'
        order by word_index""",
    )
    words, bins, has_none = _passage(at, "wt")
    assert [w for _, _, w in words] == [r[0] for r in rows] and not has_none
    assert len(bins) == 8
    for (cls, hover, _), (word, lw, wt, diff, n) in zip(words, rows):
        assert hover == _hover(word, lw, wt, diff, n)  # the word's values on hover
        assert _in_bin(wt, cls, bins), (word, wt, cls, bins[cls])  # its colour is its WT bin of the legend
    wt_classes = [c for c, _, _ in words]

    at.radio(key="ws_definition").set_value("lw").run()
    _ok(at)
    words, bins_lw, _ = _passage(at, "lw")
    assert bins_lw == bins  # one scale for both definitions
    for (cls, hover, _), (word, lw, wt, diff, n) in zip(words, rows):
        assert hover == _hover(word, lw, wt, diff, n)
        assert _in_bin(lw, cls, bins), (word, lw, cls)
    # the word that moves most changes colour with the definition
    assert words[most][0] != wt_classes[most]
    assert any("coloured by LW surprisal" in c.value for c in at.caption)


# --------------------------------------------------------------------------------------------
# WT against LW


def test_scatter_of_wt_against_lw(page, real_warehouse, tiny) -> None:
    at = page.run()
    _ok(at)
    spec, line, points, texts = _chart(at)
    [(n, n_moved)] = q(
        real_warehouse,
        f"""
        select count(*), count(*) filter (where abs(surprisal_wt_minus_lw_bits) > 1) from mart_word_surprisal
        where corpus = 'ucl' and model_key = '{tiny}' and surprisal_wt_bits is not null""",
    )
    assert len(points) == n == 1931
    groups = points["group"].value_counts().to_dict()
    assert groups["moves by 1 bit or less"] == n - n_moved
    assert groups["moves by more than 1 bit"] + groups["one of the 10 words that move most (labelled)"] == n_moved
    top = q(
        real_warehouse,
        f"""
        select doc_id, word, surprisal_lw_bits, surprisal_wt_bits from mart_word_surprisal
        where corpus = 'ucl' and model_key = '{tiny}'
        order by abs(surprisal_wt_minus_lw_bits) desc, doc_id, word_index limit 10""",
    )
    assert list(zip(texts["passage"], texts["word"])) == [(d, w) for d, w, _, _ in top]
    assert texts["surprisal_lw_bits"].tolist() == pytest.approx([r[2] for r in top])
    assert texts["surprisal_wt_bits"].tolist() == pytest.approx([r[3] for r in top])
    # the diagonal from 0 to the axis' end, in its own legend; every point and label in the colour legend
    assert line["surprisal_lw_bits"].tolist() == line["surprisal_wt_bits"].tolist()
    assert line["surprisal_lw_bits"].iloc[0] == 0
    assert line["surprisal_lw_bits"].iloc[1] >= max(
        points["surprisal_lw_bits"].max(), points["surprisal_wt_bits"].max()
    )
    line_enc, points_enc, texts_enc = (layer["encoding"] for layer in spec["layer"])
    assert line_enc["strokeDash"]["scale"]["domain"] == ["WT = LW (the correction changes nothing)"]
    assert points_enc["color"]["scale"]["domain"] == [
        "moves by 1 bit or less",
        "moves by more than 1 bit",
        "one of the 10 words that move most (labelled)",
    ]
    assert texts_enc["color"]["scale"]["domain"] == points_enc["color"]["scale"]["domain"]
    assert "bits" in points_enc["x"]["title"] and "bits" in points_enc["y"]["title"]

    # the same words in a table, with the word that follows each
    movers = _df(at, "word")
    assert movers["word"].tolist() == [w for _, w, _, _ in top]
    [(nxt,)] = q(
        real_warehouse,
        f"""
        select word from mart_word_surprisal where model_key = '{tiny}' and doc_id = '{top[0][0]}'
        and word_index = (select word_index + 1 from mart_word_surprisal where model_key = '{tiny}'
                          order by abs(surprisal_wt_minus_lw_bits) desc, doc_id, word_index limit 1)""",
    )
    assert movers["next word"].iloc[0] == nxt
    assert movers[DIFF_BITS].abs().tolist() == sorted(movers[DIFF_BITS].abs().tolist(), reverse=True)


# --------------------------------------------------------------------------------------------
# imported runs are LW only: the WT toggle says so


def test_gpt3_import_is_lw_only(page, real_warehouse) -> None:
    at = page.run()
    at.selectbox(key="ws_corpus").set_value("natural_stories").run()
    _ok(at)
    assert at.selectbox(key="ws_model").options == ["GPT-3 davinci (imported tokens: LW only)"]
    assert at.radio(key="ws_definition").value == "wt"
    [warning] = at.warning
    assert warning.value.startswith("WT is not available for GPT-3 davinci on Natural Stories: this run is LW only")
    [(lw, n)] = q(
        real_warehouse,
        "select mean_surprisal_lw_bits, n_words from mart_word_surprisal_summary where model_key = 'gpt3-davinci'",
    )
    assert any(
        m.value.startswith("GPT-3 davinci on Natural Stories is **LW only**")
        and f"{lw:.2f} bits per word over {n:,} words" in m.value
        for m in at.markdown
    )
    # no scatter, said in words instead of an empty chart
    assert at.get("vega_lite_chart") == []
    assert any("nothing to plot against LW" in i.value for i in at.info)
    # the passage is coloured by LW, the legend says so, the hover text says WT is not available
    rows = q(
        real_warehouse,
        "select word, surprisal_lw_bits, n_tokens from mart_word_surprisal where model_key = "
        "'gpt3-davinci' and doc_id = '1' order by word_index",
    )
    words, bins, has_none = _passage(at, "lw")
    assert len(words) == len(rows) > 1000
    # the API echo scores no first token: the first word has no value, shown without a colour, said on hover
    assert rows[0][1] is None and has_none
    assert words[0] == (
        "ws-none",
        f"{rows[0][0]}\nno surprisal in this run: the imported log-probabilities leave "
        "the first token of a text unscored",
        rows[0][0],
    )
    for (cls, hover, word), (w, lw_bits, n) in zip(words[1:], rows[1:]):
        assert word == w and _in_bin(lw_bits, cls, bins)
        assert hover == f"{w}\nLW {lw_bits:.2f} bits\nWT not available (LW only)\n{n} token{'s' if n != 1 else ''}"
    assert len({c for c, _, _ in words}) > 3

    at.radio(key="ws_definition").set_value("lw").run()
    _ok(at)
    assert not at.warning


def test_ucl_precomputed_word_surprisals_are_lw_only(with_ucl_imports, tiny, monkeypatch) -> None:
    at = _app(with_ucl_imports.warehouse, monkeypatch).run()
    _ok(at)
    # the scored run first, then the authors' GPT-2 and GPT-Neo by family and size
    assert at.selectbox(key="ws_model").options == [f"{tiny} (scored here: LW and WT)"] + [
        f"{m} (precomputed upstream: LW only)"
        for m in (
            "GPT-2 small",
            "GPT-2 medium",
            "GPT-2 large",
            "GPT-2 XL",
            "GPT-Neo 125M",
            "GPT-Neo 1.3B",
            "GPT-Neo 2.7B",
        )
    ]
    assert len(_df(at, "model")) == 8
    at.selectbox(key="ws_model").set_value("gpt2").run()
    _ok(at)
    [warning] = at.warning
    assert warning.value.startswith("WT is not available for GPT-2 small on UCL: this run is LW only")
    assert "precomputed upstream" in warning.value
    # the first word of a sentence has no value upstream: shown without a colour, in the legend, said on hover
    rows = q(
        with_ucl_imports,
        "select word_index, word, surprisal_lw_bits from mart_word_surprisal "
        "where model_key = 'gpt2' and doc_id = '1' order by word_index",
    )
    words, bins, has_none = _passage(at, "lw")
    assert has_none and rows[0][0] == 1
    cls, hover, word = words[0]
    assert cls == "ws-none"
    assert hover == f"{word}\nno surprisal in this run: the upstream file has none for the first word of a sentence"
    for (cls, hover, word), (_, w, lw) in zip(words[1:], rows):
        assert word == w and _in_bin(lw, cls, bins)
        assert hover == f"{w}\nLW {lw:.2f} bits\nWT not available (LW only)"
    # the finding is about the runs with WT only
    assert at.markdown[0].value.startswith(f"Under {tiny}, correcting for the trailing whitespace moves")


# --------------------------------------------------------------------------------------------
# the sentence box


def test_sentence_box_scores_the_examples_with_the_runs_model(page, tiny, expected_sentences) -> None:
    """No stand-in: the page loads the scored run's model (the tiny GPT-2's directory, the run's model id)."""
    at = page.run()
    _ok(at)
    assert at.text_area(key="ws_text").value == f"{AMBIGUOUS}\n{UNAMBIGUOUS}"
    assert at.selectbox(key="ws_sentence_model").options == [tiny]
    assert not [d for d in at.dataframe if d.value.columns[1] == "tokens"]  # nothing scored before the click
    at.button(key="ws_score").click().run()
    _ok(at)
    assert not at.error
    amb, una = _df(at, "word", n=3)[1:]  # the movers' table comes first
    for shown, text in ((amb, AMBIGUOUS), (una, UNAMBIGUOUS)):
        ex = expected_sentences[text]
        assert shown["word"].tolist() == text.split() == ex["word"].tolist()
        assert shown[LW_BITS].tolist() == pytest.approx(ex["surprisal_lw_bits"].tolist(), abs=1e-9)
        assert shown[WT_BITS].tolist() == pytest.approx(ex["surprisal_wt_bits"].tolist(), abs=1e-9)
        assert shown[DIFF_BITS].tolist() == pytest.approx(ex["surprisal_wt_minus_lw_bits"].tolist(), abs=1e-9)
        assert shown["tokens"].tolist() == [" ".join(t.replace("Ġ", "␣") for t in ts) for ts in ex["tokens"]]
    assert una.loc[una["word"] == "scratched,", "tokens"].item() == "␣scratched ,"
    # the critical word's garden-path effect under both definitions
    a = expected_sentences[AMBIGUOUS].set_index("word").loc["took"]
    u = expected_sentences[UNAMBIGUOUS].set_index("word").loc["took"]
    [gp] = [m.value for m in at.markdown if m.value.startswith("At the critical word")]
    assert (
        f"by {a['surprisal_lw_bits'] - u['surprisal_lw_bits']:.2f} bits under LW "
        f"({a['surprisal_lw_bits']:.2f} vs {u['surprisal_lw_bits']:.2f})"
    ) in gp
    assert (
        f"by {a['surprisal_wt_bits'] - u['surprisal_wt_bits']:.2f} bits under WT "
        f"({a['surprisal_wt_bits']:.2f} vs {u['surprisal_wt_bits']:.2f})"
    ) in gp
    # both sentences as coloured text, both definitions, on one scale
    words, bins, _ = _text_block(at, "LW and WT surprisal")
    assert len(words) == 4 * 14
    ex = expected_sentences[AMBIGUOUS]
    for (cls, _, word), lw in zip(words[:14], ex["surprisal_lw_bits"]):
        assert _in_bin(lw, cls, bins), (word, lw, cls)
    for (cls, _, word), wt in zip(words[14:28], ex["surprisal_wt_bits"]):
        assert _in_bin(wt, cls, bins), (word, wt, cls)


def test_sentence_box_caches_and_reports_errors_in_one_line(
    page, real_warehouse, tiny, tiny_gpt2_dir, monkeypatch
) -> None:
    """A stand-in SentenceScorer made of the tiny GPT-2's parts counts model loads and scored texts."""
    import predictabase.ingest.scoring.sentence as sentence
    from predictabase.core.errors import ModelLoadError

    parts = _tiny_parts(tiny_gpt2_dir)
    real = sentence.SentenceScorer
    loads: list[str] = []
    scored: list[str] = []

    class Counting:
        def __new__(cls, spec, paths):
            loads.append(spec)
            scorer = real.from_parts(*parts)
            inner = scorer.word_surprisals
            scorer.word_surprisals = lambda text: (scored.append(text), inner(text))[1]
            return scorer

    monkeypatch.setattr(sentence, "SentenceScorer", Counting)
    [(model_id,)] = q(real_warehouse, f"select model_id from mart_word_surprisal_summary where model_key = '{tiny}'")
    assert model_id == f"local:{tiny_gpt2_dir.resolve().name}"  # portable: the mart names no folder
    here = str(tiny_gpt2_dir.resolve())  # where the scorer loaded it from on this machine (its local record)
    at = page.run()
    _ok(at)
    assert loads == []  # opening the page loads no model
    at.button(key="ws_score").click().run()
    _ok(at)
    assert loads == [here]
    assert scored == [AMBIGUOUS, UNAMBIGUOUS]
    at.radio(key="ws_definition").set_value("lw").run()  # any rerun: both results come from the cache
    _ok(at)
    assert loads == [here] and scored == [AMBIGUOUS, UNAMBIGUOUS]
    assert len(_df(at, "word", n=3)) == 3

    at.text_area(key="ws_text").input(f"The cat sat on the mat.\n\n{AMBIGUOUS}").run()  # scored as typed
    _ok(at)
    assert loads == [here] and scored == [AMBIGUOUS, UNAMBIGUOUS, "The cat sat on the mat."]
    cat = _df(at, "word", n=3)[1]
    assert cat["word"].tolist() == ["The", "cat", "sat", "on", "the", "mat."]

    for text, message in [
        ("", "text: is empty; type a sentence (one per line)"),
        ("  \n \n", "text: is empty; type a sentence (one per line)"),
        ("x" * 2500, "text: has 2500 characters; at most 2000"),
        ("\n".join(["A b."] * 11), "text: has 11 sentences; at most 10, one per line"),
    ]:
        at.text_area(key="ws_text").input(text).run()
        _ok(at)
        assert [e.value for e in at.error] == [message]  # one line, no traceback
        _df(at, "word", n=1)  # only the movers' table: no sentence results
    assert loads == [here]

    def cannot_load(spec, paths):
        raise ModelLoadError(spec, "could not load the model: OSError: no weights")

    monkeypatch.setattr(sentence, "SentenceScorer", cannot_load)
    import streamlit as st

    st.cache_resource.clear()
    st.cache_data.clear()
    at.text_area(key="ws_text").input(AMBIGUOUS).run()
    _ok(at)
    assert [e.value for e in at.error] == [f"{model_id}: could not load the model: OSError: no weights"]  # no path


def test_sentence_box_says_when_the_model_is_not_on_this_machine(page, real_warehouse, tiny, monkeypatch) -> None:
    """A local model scored on another machine (no record of its folder here): one line, and nothing is loaded."""
    from predictabase.ingest.scoring import model_identity as identity
    from predictabase.ingest.scoring import sentence

    loads: list[str] = []
    monkeypatch.setattr(sentence, "SentenceScorer", lambda spec, paths: loads.append(spec))
    monkeypatch.setattr(identity, "_read_sources", lambda paths: {})
    monkeypatch.setattr(identity, "_from_old_runs", lambda paths, model_id: None)
    [(model_id,)] = q(real_warehouse, f"select model_id from mart_word_surprisal_summary where model_key = '{tiny}'")
    at = page.run()
    at.button(key="ws_score").click().run()
    _ok(at)
    assert not at.error and loads == []
    [warning] = [w.value for w in at.warning]
    assert f"({model_id}) is not on this machine" in warning and "\n" not in warning


def test_snapshot_without_the_word_marts(tmp_path: Path, monkeypatch) -> None:
    from .dashboard_fixtures import create_marts

    create_marts(tmp_path / "marts.duckdb")
    at = _app(tmp_path, monkeypatch).run()
    _ok(at)
    assert any("mart_word_surprisal_summary" in w.value and "not in this snapshot" in w.value for w in at.warning)


# --------------------------------------------------------------------------------------------
# the served page in a real browser


@pytest.mark.browser
@pytest.mark.timeout(300)
def test_word_surprisal_page_in_the_browser(real_warehouse, tiny, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    from .test_dashboard_browser import CHROMIUM_ARGS, Page, _charts, _nav_links, serving

    exe = shutil.which("chromium")
    if exe is None:
        pytest.fail("Debian chromium is not installed (apt-get install -y chromium; `make test` does it)")
    [(share,)] = q(
        real_warehouse, f"select share_moved_over_1_bit from mart_word_surprisal_summary where model_key = '{tiny}'"
    )
    [(word, lw, wt, diff, n)] = q(
        real_warehouse,
        f"""
        select word, surprisal_lw_bits, surprisal_wt_bits, surprisal_wt_minus_lw_bits, n_tokens
        from mart_word_surprisal where model_key = '{tiny}' and doc_id = '1' and word_index = 0""",
    )
    with serving(real_warehouse, tmp_path) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
        pg = Page(browser, tmp_path)
        try:
            pg.open(url + "/word-surprisal")  # a cold deep link goes through app.py's navigation
            pg.assert_no_exception()
            assert "Word surprisal" in [t.split("\n")[-1].strip() for t in _nav_links(pg)]
            main = pg.page.locator('[data-testid="stMain"]')
            assert f"moves {100 * share:.1f}% of UCL words by more than 1 bit" in main.inner_text()
            assert _charts(pg) == 1
            # the passage's words, each with its values as the browser's hover text
            spans = main.locator(".ws-text span[title]")
            expect(spans).to_have_count(5)
            assert spans.first.inner_text() == word
            assert spans.first.get_attribute("title") == _hover(word, lw, wt, diff, n)
            legend = main.locator(".ws-legend").first
            assert "WT: whitespace-trailing" in legend.inner_text() and "bits" in legend.inner_text()
            pg.screenshot("word_surprisal")

            pg.page.get_by_text("LW: leading-whitespace (sum of the word's token surprisals)").click()
            expect(main.locator(".ws-legend").first).to_contain_text("LW: leading-whitespace", timeout=60_000)
            pg.wait_idle()
            pg.assert_no_exception()

            pg.page.get_by_role("button", name="Score the sentences").click()
            expect(main).to_contain_text("At the critical word", timeout=120_000)
            pg.wait_idle()
            pg.assert_no_exception()
            assert main.locator('[data-testid="stDataFrame"]').count() == 4  # movers, models, two sentences
            pg.screenshot("word_surprisal_sentences")
            assert pg.outbound() == [], f"requests off this machine: {pg.outbound()}"
        finally:
            pg.close()
            browser.close()
