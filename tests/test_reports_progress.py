"""The console's progress: a live rich display on a terminal, TLC-style lines elsewhere or on request."""

from __future__ import annotations

import io

from rich.console import Console

from explorer.progress import ProgressPrinter, ProgressSnapshot, RichProgress, progress_for


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_live_only_on_a_terminal_and_not_with_no_progress() -> None:
    """A terminal gets the rich display; a pipe, or a terminal with --no-progress, gets TLC-style lines."""
    assert isinstance(progress_for(_Terminal()), RichProgress)
    assert isinstance(progress_for(_Terminal(), live=False), ProgressPrinter)
    assert isinstance(progress_for(io.StringIO()), ProgressPrinter)


def test_rich_progress_shows_the_last_numbers_when_closed() -> None:
    """The live display draws depth, states generated, distinct states and queue; close() draws the last
    snapshot even when it arrived within the refresh interval."""
    out = io.StringIO()
    progress = RichProgress(Console(file=out, force_terminal=True, width=120), refresh_seconds=3600)
    progress(ProgressSnapshot(seconds=1.0, depth=3, generated=1_234, distinct=567, queue=89))
    progress(ProgressSnapshot(seconds=2.0, depth=4, generated=98_765, distinct=43_210, queue=12))
    assert "1,234" in out.getvalue() and "98,765" not in out.getvalue()
    progress.close()
    shown = out.getvalue()
    for number in ("98,765", "43,210", "states generated", "distinct states", "left on queue"):
        assert number in shown


def test_plain_progress_lines_use_tlc_vocabulary() -> None:
    """The plain printer writes TLC's Progress line."""
    out = io.StringIO()
    ProgressPrinter(out)(ProgressSnapshot(seconds=60.0, depth=7, generated=6_000, distinct=4_000, queue=100))
    assert out.getvalue() == ("Progress(7) at 60.0s: 6,000 states generated (6,000 s/min), 4,000 distinct states "
                              "found, 100 states left on queue.\n")
