"""The "Top-1 game" page (Shlegeris et al. 2024, sec. 3, Figures 1-2) against a hand-made snapshot of the three top-1
marts (tests/top1_dashboard_fixtures.py): the finding sentence's numbers, the histogram's players and the
models' lines (every mark in a legend), the summary table in words, the question explorer (true token,
every guess, each model's prediction and top next tokens) and the questions where players beat every model.
AppTest for the values; one real-browser test (Debian's chromium through Playwright) for the served page.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from .top1_dashboard_fixtures import FINDING, GEMMA, MODEL, PLAYERS, REFERENCES, WORD_SHARE, create_top1_marts

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "dashboards" / "app_pages" / "top1.py"
# mart_top1_summary's column names: none may show up as a header of its table
SUMMARY_COLUMNS = {
    "predictor_kind",
    "predictor",
    "comparison",
    "subset",
    "n",
    "n_correct",
    "accuracy",
    "accuracy_ci_low",
    "accuracy_ci_high",
    "n_players",
    "n_players_min_50",
    "mean_player_accuracy_min_50",
    "pooled_accuracy_min_50",
    "human_accuracy_same_questions",
    "n_without_prediction",
    "share_argmax_proven",
    "share_proven_by_mass",
    "reference_file",
    "reference_note",
}
SUMMARY_HEADERS = [
    "players or model",
    "how compared",
    "accuracy (%)",
    "95% interval (%)",
    "players on the same answers (%)",
    "answers",
    "questions",
    "prediction proven most probable (% of questions)",
    "players",
    "players with ≥ 50 answers",
    "their mean accuracy (%)",
    "answers without a model prediction",
    "about the authors' file",
]
SMOL = "SmolLM2-135M-Instruct (4-bit GGUF) (most probable whole word, measured here)"


def _app(tmp_path: Path, monkeypatch, *, snapshot=create_top1_marts, **kwargs):
    from streamlit.testing.v1 import AppTest

    snapshot(tmp_path / "marts.duckdb", **kwargs)
    monkeypatch.setenv("PREDICTABASE_WAREHOUSE", str(tmp_path))
    monkeypatch.syspath_prepend(str(ROOT / "dashboards"))
    sys.modules.pop("data", None)
    return AppTest.from_file(str(PAGE), default_timeout=60)


@pytest.fixture
def page(tmp_path: Path, monkeypatch):
    return _app(tmp_path, monkeypatch)


def _ok(at) -> None:
    assert not at.exception, [e.message for e in at.exception]


def _chart(at):
    """The figure's Vega-Lite spec and its two datasets: the players (bars) and the models (lines)."""
    [chart] = at.get("vega_lite_chart")
    spec = json.loads(chart.proto.spec)
    data = {d.name: pa.ipc.open_stream(d.data.data).read_all().to_pandas() for d in chart.proto.datasets}
    bars, rules = spec["layer"]
    assert bars["mark"]["type"] == "bar" and rules["mark"]["type"] == "rule"
    return spec, data[bars["data"]["name"]], data[rules["data"]["name"]]


def _df(at, first_column: str):
    """The grid whose first header is `first_column` (AppTest does not expose a grid's key)."""
    [df] = [d.value for d in at.dataframe if d.value.columns[0] == first_column]
    return df


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _accuracy(subset: str, pid: str) -> float:
    """A fixture player's accuracy as the mart holds it (correct / answers)."""
    _pid, n_all, _basis, acc_all, acc_word = next(p for p in PLAYERS if p[0] == pid)
    n = n_all if subset == "all_possible" else int(n_all * WORD_SHARE)
    return round((acc_all if subset == "all_possible" else acc_word) * n) / n


def test_opens_with_the_finding_and_figure_2(page) -> None:
    at = page.run()
    _ok(at)
    assert at.title[0].value == "Top-1 game"
    assert at.markdown[0].value == FINDING  # 336 / 960 = 35.0%, the players 270 / 960 = 28.1%
    assert at.radio(key="top1_subset").value == "word_tokens"  # comparable by default: whole words
    assert at.number_input(key="top1_min_answers").value == 50 and not at.toggle(key="top1_excluded").value

    spec, players, models = _chart(at)
    assert spec["title"]["text"].startswith(
        "Figure 2: players' top-1 accuracy on questions whose answer is a whole word"
    )
    # the five players with >= 50 answers, none excluded; the 20-answer player and 'anon' are out
    assert sorted(players["player_id"]) == ["101", "102", "103", "104", "105"]
    for pid, acc in zip(players["player_id"], players["accuracy"]):
        assert acc == pytest.approx(_accuracy("word_tokens", pid))
    # one line per model: ours solid, the authors' dashed (the file of the paper's Figure 2 by default)
    lines = dict(zip(models["series"], models["accuracy"]))
    assert lines == {
        SMOL: pytest.approx(MODEL["n_correct"] / MODEL["n"]),
        "GPT-Neo 125M, reported by the authors": pytest.approx(0.297),  # one file: not named
        "GPT-J-6B, reported by the authors": pytest.approx(0.422),
    }
    enc = spec["layer"][1]["encoding"]
    dashes = dict(zip(enc["strokeDash"]["scale"]["domain"], enc["strokeDash"]["scale"]["range"]))
    assert dashes[SMOL] == [1, 0] and all(d == [6, 4] for s, d in dashes.items() if s != SMOL)
    # every mark in a legend: the bars' groups, every line by name
    assert spec["layer"][0]["encoding"]["color"]["scale"]["domain"] == ["players"]
    assert enc["color"]["scale"]["domain"] == list(models["series"])
    assert enc["color"]["legend"] is not None and spec["layer"][0]["encoding"]["color"]["legend"] is not None


def test_filters_and_figure_1(page) -> None:
    at = page.run()
    at.number_input(key="top1_min_answers").set_value(10).run()
    _ok(at)
    assert "106" in set(_chart(at)[1]["player_id"])  # 20 answers
    at.toggle(key="top1_excluded").set_value(True).run()
    _ok(at)
    spec, players, _ = _chart(at)
    assert len(players) == 7 and set(players.loc[players["player_id"] == "anon", "group"]) == {
        "excluded accounts (app testers, the shared 'anon' account)"
    }
    assert len(spec["layer"][0]["encoding"]["color"]["scale"]["domain"]) == 2  # the excluded bars have a legend

    at.radio(key="top1_subset").set_value("all_possible").run()
    _ok(at)
    spec, players, models = _chart(at)
    assert spec["title"]["text"].startswith("Figure 1: players' top-1 accuracy on all possible questions (7 players")
    assert players.set_index("player_id")["accuracy"].to_dict() == pytest.approx(
        {p[0]: _accuracy("all_possible", p[0]) for p in PLAYERS}
    )
    # no model of ours is compared on all possible questions (no GPT-2 tokenizer): the authors' Figure 1 only
    assert dict(zip(models["series"], models["accuracy"])) == {
        "GPT-Neo 125M, reported by the authors": pytest.approx(0.38),
        "GPT-3 davinci, reported by the authors": pytest.approx(0.56),
    }
    assert any("No model is measured here on all possible questions" in c.value for c in at.caption)
    # three files report davinci: each line is named with its file's ordinal in words, never the file's name
    # (model_perfs_new_new_new_orig.json), in the selector too, which marks the file of the paper's figure
    files = sorted({f for _, subset, _, f in REFERENCES if subset == "all_possible"})
    options = at.multiselect(key="top1_files_all_possible").options
    assert options == [
        f"the authors' results set {i}" + (" (the paper's figure)" if f == "model_perfs_new_new_new_orig.json" else "")
        for i, f in enumerate(files, start=1)
    ]
    chosen = ["model_perfs.json", "model_perfs_new_new_new_orig.json", "model_perfs_origin.json"]
    ordinal = {f: 1 + files.index(f) for f in chosen}
    at.multiselect(key="top1_files_all_possible").set_value(chosen).run()
    _ok(at)
    davinci = [s for s in _chart(at)[2]["series"] if s.startswith("GPT-3 davinci")]
    assert sorted(davinci) == sorted(
        f"GPT-3 davinci, reported by the authors (the authors' results set {ordinal[f]})" for f in chosen
    )
    assert not any(".json" in s for s in _chart(at)[2]["series"])


def test_summary_table_in_words(page) -> None:
    at = page.run()
    _ok(at)
    t = _df(at, "players or model")
    assert list(t.columns) == SUMMARY_HEADERS
    assert not set(t.columns) & SUMMARY_COLUMNS and not any("_" in c for c in t.columns)
    assert set(t["questions"]) == {"whole-word answers"}  # like with like by default
    rows = t.set_index("players or model")
    smol = rows.loc["SmolLM2-135M-Instruct (4-bit GGUF)"]
    assert smol["how compared"] == "most probable whole word"
    assert smol["answers"] == 960 and smol["accuracy (%)"] == pytest.approx(35.0)
    assert smol["95% interval (%)"] == "32.0 – 38.1"
    assert smol["players on the same answers (%)"] == pytest.approx(28.125)
    assert smol["prediction proven most probable (% of questions)"] == pytest.approx(97.5)
    assert smol["answers without a model prediction"] == 40
    humans = rows.loc["players (pooled)"]
    assert humans["how compared"] == "human guesses" and humans["answers"] == 1000
    assert humans["players with ≥ 50 answers"] == 5 and humans["their mean accuracy (%)"] == pytest.approx(29.6)
    ref = rows.loc["GPT-J-6B (model_perfs_new_new_new.json)"]
    assert ref["how compared"] == "reported by the authors (not measured here)"
    assert ref["accuracy (%)"] == pytest.approx(42.2) and ref["95% interval (%)"] == "—"

    at.toggle(key="top1_both").set_value(True).run()
    _ok(at)
    t = _df(at, "players or model")
    assert len(t) == 3 + len(REFERENCES)
    # every row told apart in words (davinci from three files: labelled with each file)
    assert not t.duplicated(["players or model", "questions"]).any()
    assert {"GPT-3 davinci (model_perfs.json)", "GPT-3 davinci (model_perfs_origin.json)"} <= set(t["players or model"])
    assert set(t["questions"]) == {"whole-word answers", "all possible"}


def test_question_explorer(page) -> None:
    at = page.run()
    _ok(at)
    # documents in numeric order ('7' before '12'); the first question players answered
    assert at.selectbox(key="top1_doc").options[:2] == ["document 7 (2 questions)", "document 12 (2 questions)"]
    assert at.select_slider(key="top1_pos").value == 3
    assert at.code[0].value == "Once upon a time"
    m = _metrics(at)
    assert m["True next token"] == "␣the" and m["Token after it"] == "␣cat"
    assert m["Players right"] == "2 of 4" and m["Models right"] == "1 of 1"
    guesses = _df(at, "guess")
    # ' the' and 'the' are different tokens: only the one with the space is right
    assert guesses.to_dict("records") == [
        {"guess": "␣the", "players who typed it": 2, "right": True},
        {"guess": "␣a", "players who typed it": 1, "right": False},
        {"guess": "the", "players who typed it": 1, "right": False},
    ]
    preds = _df(at, "model")
    assert preds[["model", "prediction", "right"]].to_dict("records") == [
        {"model": "SmolLM2-135M-Instruct (4-bit GGUF)", "prediction": "␣the", "right": True}
    ]
    assert preds["probability (%)"].tolist() == pytest.approx([41.0])
    tops = _df(at, "token")
    assert tops["token"].tolist() == ["␣the", "␣a", ","]
    assert tops["probability (%)"].tolist() == pytest.approx([40.0, 21.0, 5.0])

    at.button(key="top1_next").click().run()
    _ok(at)
    assert at.select_slider(key="top1_pos").value == 5
    assert _metrics(at)["True next token"] == "␣cat"
    assert _df(at, "guess").set_index("guess")["right"].to_dict() == {"␣cat": True, "␣dog": False}
    assert _df(at, "model")["prediction"].tolist() == ["␣dog"]
    assert at.button(key="top1_next").disabled  # the last answered question of document 7

    at.toggle(key="top1_only_answered").set_value(False).run()  # also the question nobody could answer
    at.button(key="top1_next").click().run()
    _ok(at)
    assert _metrics(at)["True next token"] == "↵" and _metrics(at)["Players right"] == "0 of 0"
    assert any("could not be typed" in c.value for c in at.caption)

    at.selectbox(key="top1_doc").set_value("12").run()
    _ok(at)
    assert _metrics(at)["True next token"] == "␣Paris"
    assert _df(at, "guess")["guess"].tolist() == ["␣London", "␣Rome"]
    # this prediction has no top next tokens: the page says so
    assert any("no top next tokens in this snapshot" in c.value for c in at.caption)
    at.button(key="top1_next").click().run()  # 'ing': not a whole word, no model answered it (NULL predictions)
    _ok(at)
    assert _metrics(at)["True next token"] == "ing" and _metrics(at)["Models right"] == "0 of 0"
    assert any("No model has a prediction for this question" in c.value for c in at.caption)
    assert any("not a whole word" in c.value for c in at.caption)


def test_where_players_beat_every_model(page) -> None:
    at = page.run()
    _ok(at)
    beat = _df(at, "document")
    # doc 7 position 5 (a player said ' cat', the model ' dog'); not doc 12 position 6: no model answered it
    assert beat[["document", "position", "true token", "players right", "players' answers"]].to_dict("records") == [
        {"document": "7", "position": 5, "true token": "␣cat", "players right": 1, "players' answers": 2}
    ]
    assert beat["models' predictions"].tolist() == ["SmolLM2-135M-Instruct (4-bit GGUF): ␣dog"]
    at.selectbox(key="top1_jump").set_value(("7", 5)).run()
    _ok(at)
    assert at.select_slider(key="top1_pos").value == 5 and _metrics(at)["True next token"] == "␣cat"


def test_finding_with_two_models_and_with_none(tmp_path: Path, monkeypatch) -> None:
    at = _app(tmp_path / "two", monkeypatch, models=(MODEL, GEMMA)).run()
    _ok(at)
    assert at.markdown[0].value == (
        "On the 960 answers players gave to questions whose answer is a whole word, the players were right 28.1% of "
        "the time and, on the same questions, the models' most probable next word was right 40.0% of the time for "
        "Gemma 3 270M (4-bit GGUF) and 35.0% for SmolLM2-135M-Instruct (4-bit GGUF)."
    )
    _, _, models = _chart(at)
    assert {"Gemma 3 270M (4-bit GGUF) (most probable whole word, measured here)", SMOL} <= set(models["series"])

    at = _app(tmp_path / "none", monkeypatch, models=()).run()
    _ok(at)
    assert at.markdown[0].value.startswith(
        "On the 1,000 answers players gave to questions whose answer is a whole "
        "word, the players were right 29.0% of the time; no model has been "
        "measured on the game yet"
    )


def test_snapshot_without_top_next_tokens(tmp_path: Path, monkeypatch) -> None:
    """A build from before the explorer's top next tokens: the struct lacks the two fields."""
    at = _app(tmp_path, monkeypatch, tops=False).run()
    _ok(at)
    assert _metrics(at)["True next token"] == "␣the"
    assert any("no top next tokens in this snapshot" in c.value for c in at.caption)


def test_snapshot_without_the_top1_marts(tmp_path: Path, monkeypatch) -> None:
    from .dashboard_fixtures import create_marts

    at = _app(tmp_path, monkeypatch, snapshot=create_marts).run()
    _ok(at)
    assert any("mart_top1_summary" in w.value and "not in this snapshot" in w.value for w in at.warning)


# --------------------------------------------------------------------------------------------
# the served page in a real browser


@pytest.mark.browser
@pytest.mark.timeout(300)
def test_top1_page_in_the_browser(tmp_path: Path) -> None:
    import shutil

    from playwright.sync_api import expect, sync_playwright

    from predictabase.core.config import paths as make_paths

    from .test_dashboard_browser import CHROMIUM_ARGS, Page, _charts, _grids_text, _nav_links, serving

    exe = shutil.which("chromium")
    if exe is None:
        pytest.fail("Debian chromium is not installed (apt-get install -y chromium; `make test` does it)")
    p = make_paths(tmp_path / "warehouse")
    create_top1_marts(p.marts)
    with serving(p, tmp_path) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
        pg = Page(browser, tmp_path)
        try:
            pg.open(url + "/top1")  # a cold deep link goes through app.py's navigation
            pg.assert_no_exception()
            assert "Top-1 game" in [t.split("\n")[-1].strip() for t in _nav_links(pg)]
            main = pg.page.locator('[data-testid="stMain"]')
            assert FINDING in main.inner_text()
            assert _charts(pg) == 1
            # summary, guesses, predictions (+ top tokens; the beat list is collapsed); every one of these texts
            # must be in a cell (read again until then: CI once read the grids before the summary's cells filled)
            _grids_text(
                pg,
                3,
                containing=(
                    "SmolLM2-135M-Instruct (4-bit GGUF)",
                    "most probable whole word",
                    "human guesses",
                    "reported by the authors (not measured here)",
                    "GPT-J-6B (model_perfs_new_new_new.json)",
                    "players on the same answers (%)",
                    "␣the",
                ),
            )
            pg.screenshot("top1")
            assert "␣the" in main.locator('[data-testid="stMetric"]').first.inner_text()

            pg.page.get_by_role("button", name="next ▶").click()
            # the true token of the next question (' cat' was the token after it before: wait for the metric)
            expect(main.locator('[data-testid="stMetric"]').first).to_contain_text("␣cat", timeout=60_000)
            pg.wait_idle()
            pg.assert_no_exception()

            pg.page.get_by_text("all possible questions (Figure 1").click()
            expect(main).to_contain_text("No model is measured here on all possible questions", timeout=60_000)
            pg.wait_idle()
            pg.assert_no_exception()
            assert _charts(pg) == 1
            pg.screenshot("top1_figure1")
            assert pg.outbound() == [], f"requests off this machine: {pg.outbound()}"
        finally:
            pg.close()
            browser.close()
