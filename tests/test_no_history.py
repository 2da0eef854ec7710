"""The project states what it does and why, not how it got there: no tracked file (code, SQL, YAML, pages, docs,
tests, the changelog) names an issue by its number or a paper by a numbered key that exists nowhere in the
repository. A comment keeps the reason, not the provenance; a paper is cited by its authors, year and section or
equation (e.g. "Oh & Schuler 2024, eq. 6"), as ingest/sources/references.toml lists them.

Checked on `git ls-files` (file names and contents; no network, well under a second).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# a comment's leader between words a line break splits ("issue" at one line's end, the number on the next)
_BREAK = r"(?:\s|#:?|--|//|\{#-?)*"
CONTENT = [
    ("an issue number", re.compile(r"\bissues?" + _BREAK + r"(?:no\.?\s*)?#?\d", re.IGNORECASE)),
    ("an issue in a name", re.compile(r"\bissue[_-]?\d", re.IGNORECASE)),
    ("a paper by its key", re.compile(r"\bpapers?" + _BREAK + r"00\d", re.IGNORECASE)),
    ("a paper key in a name", re.compile(r"\bpaper[_-]?00\d", re.IGNORECASE)),
]
NAME = re.compile(r"issue[_-]?\d|paper[_-]?00\d", re.IGNORECASE)


def _tracked() -> list[str]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60)
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.skip(f"not a git checkout: {e}")
    return [f for f in out.stdout.decode("utf-8", "surrogateescape").split("\0") if f]


def _text(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:  # tracked, but deleted in the working tree
        return None
    if b"\0" in data[:8192]:
        return None  # binary
    return data.decode("utf-8", "replace")


def test_no_tracked_file_names_an_issue_number_or_a_paper_key():
    hits = []
    for name in _tracked():
        if NAME.search(name):
            hits.append(f"{name}: its name")
        text = _text(ROOT / name)
        if text is None:
            continue
        for what, pattern in CONTENT:
            for m in pattern.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                hits.append(f"{name}:{line}: {what}: {m.group(0)!r}")
    hits = sorted(set(hits))
    assert not hits, f"{len(hits)} mentions of history (cite by authors and year; say the reason):\n" + "\n".join(hits)
