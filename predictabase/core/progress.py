"""Progress bars, on standard error and only at a terminal.

A bar on standard output would mix with what a command prints there (`--json`, tables), and rich draws a blank
line when a bar stops on a stream that is not a terminal (an interrupted `score` in a cron mail or a log): so
every bar of predictabase goes to standard error and is drawn only when that is a terminal.
"""

from __future__ import annotations

from rich.console import Console
from rich.progress import Progress, ProgressColumn


def progress_bar(*columns: str | ProgressColumn, show: bool = True, transient: bool = True) -> Progress:
    """A rich Progress with `columns` (rich's default columns when none), drawn only when `show` and standard
    error is a terminal."""
    console = Console(stderr=True)
    return Progress(*columns, console=console, disable=not (show and console.is_terminal), transient=transient)
