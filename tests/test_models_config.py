"""models.toml: the models `predictabase refresh` keeps scored; a bad file is one line naming it and the entry."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from predictabase.cli import app
from predictabase.core.config import PROJECT_ROOT
from predictabase.core.errors import OptionError
from predictabase.models_config import CORPORA, ModelEntry, load_models_config


def test_the_repository_file_keeps_the_default_model_scored_everywhere():
    [entry] = load_models_config(PROJECT_ROOT / "models.toml")
    assert entry == ModelEntry(name="smollm2-135m", corpora=CORPORA, top1=True, cloze=True, temperature=True)


@pytest.mark.parametrize(
    "text, message",
    [
        ('[[model]]\nname = "a"\ncorpora = ["nope"]\n', "[[model]] #1: `corpora` must be a list drawn from lm_game"),
        ('[[model]]\nname = "a"\n[[model]]\nname = "b"\ntop_k = -1\n', "[[model]] #2: `top_k` must be an integer >= 0"),
        ('[[model]]\nname = "a"\ncontext_length = 1\n', "`context_length` must be an integer >= 2"),
        ('[[model]]\nname = "a"\ndtype = "fp8"\n', "`dtype` must be one of float32, bfloat16, float16"),
        ('[[model]]\nname = "a"\ntop1 = "yes"\n', "`top1` must be true or false"),
        ('[[model]]\nname = "a"\nentropy = 1\n', "`entropy` must be true or false"),
        ('[[model]]\nname = "a"\nentropy_samples = 1\n', "`entropy_samples` must be an integer from 2 to 4096"),
        ('[[model]]\nname = "a"\nentropy_samples = 5000\n', "`entropy_samples` must be an integer from 2 to 4096"),
        ('[[model]]\nname = "a"\nentropy_alpha = 1\n', "`entropy_alpha` must be a number > 0 and <= 10, not 1"),
        ('[[model]]\nname = "a"\nentropy_alpha = 0\n', "`entropy_alpha` must be a number > 0 and <= 10, not 1"),
        ('[[model]]\nname = "a"\ntemperature = "yes"\n', "`temperature` must be true or false"),
        ('[[model]]\nname = "a"\ntemperatures = 2\n', "`temperatures` must be a list of numbers"),
        ('[[model]]\nname = "a"\ntemperatures = [2, 3]\n', "`temperatures`: the grid must hold 1"),
        ('[[model]]\nname = "a"\ntemperatures = [1, 500]\n', "`temperatures`: 1.0, 500.0: each T must be from 0.05"),
        ('[[model]]\nname = "a"\nlayers = 3\n', "unknown key(s) layers"),
        ('[[model]]\ncorpora = ["ucl"]\n', "`name` (a model alias, hub name or path) is required"),
        ('[[model]]\nname = "a"\n[[model]]\nname = "a"\n', "model(s) listed twice: a"),
        ('title = "no models"\n', "no [[model]] entries"),
        ('[[model]\nname = "a"\n', "not valid TOML"),
    ],
)
def test_bad_files_are_refused_naming_the_file_and_entry(tmp_path, text, message):
    f = tmp_path / "models.toml"
    f.write_text(text)
    with pytest.raises(OptionError) as err:
        load_models_config(f)
    assert f"--models {f}" in str(err.value) and message in str(err.value)


def test_entries_keep_their_settings_and_order(tmp_path):
    f = tmp_path / "models.toml"
    f.write_text(
        '[[model]]\nname = "gemma3-270m"\ncorpora = ["ucl", "provo", "ucl"]\ntop_k = 0\n'
        '[[model]]\nname = "/models/x"\ncontext_length = 512\nstride = 256\ndtype = "bfloat16"\n'
        "entropy = true\nentropy_samples = 64\nentropy_alpha = 2\ntemperature = true\ntemperatures = [1, 2.5]\n"
    )
    a, b = load_models_config(f)
    assert (a.name, a.corpora, a.top_k, a.top1, a.cloze) == ("gemma3-270m", ("ucl", "provo"), 0, False, False)
    assert (a.entropy, a.entropy_samples, a.entropy_alpha) == (False, 16, 0.5)
    assert (b.corpora, b.context_length, b.stride, b.dtype) == (CORPORA, 512, 256, "bfloat16")
    assert (b.entropy, b.entropy_samples, b.entropy_alpha) == (True, 64, 2.0)
    assert (a.temperature, a.temperatures, b.temperature, b.temperatures) == (False, None, True, (1.0, 2.5))


def test_the_cli_prints_the_entry_brackets_as_written(tmp_path):
    """rich markup must not eat `[[model]]` out of the one-line error."""
    (tmp_path / "wh").mkdir()
    f = tmp_path / "models.toml"
    f.write_text('[[model]]\nname = "a"\ncorpora = ["nope"]\n')
    res = CliRunner().invoke(app, ["refresh", "--models", str(f), "--warehouse", str(tmp_path / "wh")])
    assert res.exit_code == 2
    assert " ".join(res.output.split()) == (
        f"error: --models {f} [[model]] #1: `corpora` must be a list drawn "
        "from lm_game, natural_stories, provo, ucl, meco_nl, meco_en, meco_fi, "
        "meco_de, meco_el, meco_he, meco_it, meco_ko, meco_ru, meco_es, meco_tr"
    )
