"""The collect hook between the dashboard and `predictabase export` (predictabase/export.py): while switched on,
every chart the dashboard's `charts.show` draws and every table its `labels.show` draws are recorded here, in
drawing order, with the page they are on. Off, as in the served
dashboard, nothing is kept. The dashboard imports this module (the application's, not one of its own), so the
export reaches the pages' output without importing the dashboard's modules or changing `sys.path`."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import altair as alt
import pandas as pd


@dataclass
class Chart:
    page: str
    title: str
    chart: alt.TopLevelMixin  # as drawn: with its title and description


@dataclass
class Table:
    page: str
    title: str
    df: pd.DataFrame  # the columns shown, in the order shown
    headers: dict[str, str] = field(default_factory=dict)  # column -> header in words, with its unit
    formats: dict[str, str | None] = field(default_factory=dict)  # column -> printf format (None: as it is)


_lock = threading.Lock()
_page: str | None = None  # the page being collected; None: the hook is off
_items: list[Chart | Table] = []


def start(page: str) -> None:
    """Switch the hook on for `page` (what was recorded before is dropped)."""
    global _page
    with _lock:
        _page = page
        _items.clear()


def stop() -> list[Chart | Table]:
    """Switch the hook off; what it recorded, in drawing order."""
    global _page
    with _lock:
        _page, items = None, list(_items)
        _items.clear()
    return items


def chart(title: str, drawn: alt.TopLevelMixin) -> None:
    with _lock:
        if _page is not None:
            _items.append(Chart(_page, title, drawn))


def table(title: str, df: pd.DataFrame, headers: dict[str, str], formats: dict[str, str | None]) -> None:
    with _lock:
        if _page is not None:
            _items.append(Table(_page, title, df.copy(), dict(headers), dict(formats)))
