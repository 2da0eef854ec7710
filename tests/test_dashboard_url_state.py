"""The dashboard's views in the URL (dashboards/url_state.py), its charts' titles and descriptions
(dashboards/charts.py) and its theme: fast checks without a browser (AppTest and the pages' source).
The served pages in a real browser: tests/test_dashboard_browser.py."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DASHBOARDS = ROOT / "dashboards"
PAGES = sorted((DASHBOARDS / "app_pages").glob("*.py"))
# widgets that do not pick a view: they act (open a question, score a typed sentence, answer a game's question,
# choose how to answer or how long a game is); a key built per question counts by its constant prefix
NOT_A_VIEW = {"top1_jump", "ws_sentence_model", "t1_how", "t1_pick_", "pw_length"}


def _view_script():
    """A page with one widget of each kind, each kept in the URL."""
    import streamlit as st

    import url_state

    corpus = url_state.selectbox(
        "Corpus", ["natural_stories", "provo", "ucl"], key="c", param="corpus", default="provo", format_func=str.upper
    )
    measure = url_state.radio("Measure", {"spr": "self-paced", "gaze": "gaze"}, key="m", param="measure")
    models = url_state.multiselect("Models", ["gpt2", "smollm2"], key="ms", param="model")
    word = url_state.select_slider("Word", [0, 1, 2], key="w", param="word")
    log = url_state.toggle("Log scale", key="l", param="log")
    st.write(repr((corpus, measure, models, word, log)))


@pytest.fixture
def view(monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.syspath_prepend(str(DASHBOARDS))
    return AppTest.from_function(_view_script, default_timeout=30)


def _shown(at) -> tuple:
    assert not at.exception, [e.message for e in at.exception]
    return ast.literal_eval(at.markdown[-1].value.strip("`"))


def _params(at) -> dict[str, list[str]]:
    return {k: [v] if isinstance(v, str) else list(v) for k, v in at.query_params.items()}


def test_no_parameters_show_the_defaults_and_leave_the_url_clean(view) -> None:
    at = view.run()
    assert _shown(at) == ("provo", "spr", ["gpt2", "smollm2"], 0, False)
    assert _params(at) == {}


def test_valid_parameters_set_the_widgets(view) -> None:
    view.query_params.update({"corpus": "ucl", "measure": "gaze", "model": ["smollm2"], "word": "2", "log": "true"})
    at = view.run()
    assert _shown(at) == ("ucl", "gaze", ["smollm2"], 2, True)
    assert at.selectbox(key="c").value == "ucl" and at.radio(key="m").value == "gaze"
    assert _params(at) == {"corpus": ["ucl"], "measure": ["gaze"], "model": ["smollm2"], "word": ["2"], "log": ["true"]}


def test_invalid_parameters_fall_back_to_the_defaults_silently(view) -> None:
    # a label instead of the value, an unknown option, a word out of range, not a boolean
    view.query_params.update({"corpus": "UCL", "measure": "nope", "model": ["gpt-9"], "word": "7", "log": "yes"})
    at = view.run()
    assert _shown(at) == ("provo", "spr", ["gpt2", "smollm2"], 0, False)
    assert not at.error and not at.warning
    assert _params(at) == {}  # the invalid values leave the URL


def test_a_change_updates_the_url_and_the_default_leaves_it(view) -> None:
    at = view.run()
    at.selectbox(key="c").set_value("natural_stories").run()
    at.multiselect(key="ms").set_value(["smollm2", "gpt2"]).run()
    at.select_slider(key="w").set_value(1).run()
    assert _shown(at) == ("natural_stories", "spr", ["smollm2", "gpt2"], 1, False)
    assert _params(at) == {"corpus": ["natural_stories"], "model": ["smollm2", "gpt2"], "word": ["1"]}
    at.selectbox(key="c").set_value("provo").run()  # back to the default: the parameter goes
    assert _params(at) == {"model": ["smollm2", "gpt2"], "word": ["1"]}


def test_a_value_set_by_a_callback_reaches_the_url(view) -> None:
    at = view.run()
    at.session_state["w"] = 2  # as the top-1 page's "next ▶" button does
    at.run()
    assert _shown(at)[3] == 2 and _params(at) == {"word": ["2"]}


# --------------------------------------------------------------------------------------------
# every page: its views through url_state, its charts through charts.show (a title and a description)


def _calls(path: Path) -> list[ast.Call]:
    return [n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Call)]


def _name(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")


def _owner(call: ast.Call) -> str:
    f = call.func
    return f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else ""


def _keyword(call: ast.Call, name: str):
    return next((k.value for k in call.keywords if k.arg == name), None)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_every_chart_has_a_title_and_a_description(page: Path) -> None:
    calls = _calls(page)
    direct = [c.lineno for c in calls if _name(c).endswith("_chart") and _owner(c) != "charts"]
    assert direct == [], f"{page.name}: draw charts with charts.show (a title and a description), lines {direct}"
    for c in calls:
        if _owner(c) == "charts" and _name(c) == "show":
            title, description = c.args[1], c.args[2]
            assert isinstance(description, (ast.Constant, ast.JoinedStr)), f"{page.name}:{c.lineno}"
            assert ast.unparse(description).rstrip("'\"").endswith("."), f"{page.name}:{c.lineno}: one sentence"
            for arg in (title, description):  # a name (a title built above) is checked when drawn (charts.show)
                if isinstance(arg, (ast.Constant, ast.JoinedStr)):
                    text = (
                        arg.value
                        if isinstance(arg, ast.Constant)
                        else "".join(v.value for v in arg.values if isinstance(v, ast.Constant))
                    )
                    assert len(text.strip()) >= 10, f"{page.name}:{c.lineno}: {text!r}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_every_view_selector_is_kept_in_the_url(page: Path) -> None:
    names = set()
    for c in _calls(page):
        if _name(c) in {"selectbox", "radio", "multiselect", "select_slider", "segmented_control", "pills"}:
            key = _keyword(c, "key")
            if _owner(c) == "url_state":
                param = _keyword(c, "param")
                assert isinstance(param, ast.Constant) and param.value.isidentifier(), f"{page.name}:{c.lineno}"
                assert param.value not in names, f"{page.name}: two widgets on ?{param.value}"
                names.add(param.value)
            else:
                if isinstance(key, ast.JoinedStr) and key.values and isinstance(key.values[0], ast.Constant):
                    key = key.values[0]  # f"t1_pick_{question}": its constant prefix
                assert isinstance(key, ast.Constant) and key.value in NOT_A_VIEW, (
                    f"{page.name}:{c.lineno}: keep the view in the URL with url_state"
                )


def test_charts_show_refuses_a_chart_without_a_title(monkeypatch) -> None:
    import altair as alt
    import pandas as pd

    monkeypatch.syspath_prepend(str(DASHBOARDS))
    import charts

    chart = alt.Chart(pd.DataFrame({"x": [1]})).mark_point().encode(x="x:Q")
    with pytest.raises(ValueError, match="title and a description"):
        charts.show(chart, " ", "A point.")
    with pytest.raises(ValueError, match="title and a description"):
        charts.show(chart, "A point", "")


def test_the_theme_is_the_users() -> None:
    """Neither the config file nor `predictabase serve` forces a light (or dark) theme."""
    import tomllib

    from predictabase.core.config import paths as make_paths
    from predictabase.warehouse.serve import streamlit_command

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert "base" not in config.get("theme", {})
    argv, _env = streamlit_command(make_paths(ROOT / "warehouse"), 8599)
    assert not any(a.startswith("--theme.") for a in argv)


def test_the_server_runs_no_full_collection_after_every_run() -> None:
    """Streamlit's default gc.collect(2) after every script run was half the server's time with six
    players at once. `predictabase serve` and the config file for `streamlit run` both switch it off, and say
    the same as each other on every setting the config file holds."""
    import tomllib

    from predictabase.core.config import paths as make_paths
    from predictabase.warehouse.serve import streamlit_command

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    argv, _env = streamlit_command(make_paths(ROOT / "warehouse"), 8599)
    flags = dict(zip(argv[::1], argv[1::1]))
    assert config["runner"]["postScriptGC"] is False and flags["--runner.postScriptGC"] == "false"
    for section, options in config.items():
        for name, value in options.items():
            assert flags[f"--{section}.{name}"] == str(value).lower(), (section, name)
