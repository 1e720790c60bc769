"""The entry of the ``kmc`` console script and of ``python -m kmc``: signals first, then the commands.

Importing the command line (click, numpy, the model, pyarrow for some commands) takes a moment,
seconds on a loaded machine; a signal in that time ended Python with a ``KeyboardInterrupt``
traceback and exit 130 (SIGINT), or silently with 143 (SIGTERM). This module imports only the
standard library and, before anything else is imported, answers SIGINT and SIGTERM as kmc answers
an interrupt outside a search (:class:`kmc.common.Interrupts`): one line, exit status 3. Once
:mod:`kmc.cli` runs, its own handlers take over.
"""

from __future__ import annotations

import os
import signal
from types import FrameType

#: Outcome.INCONCLUSIVE's exit status (explorer.results is not imported here: it is not needed to exit).
_INTERRUPTED_STATUS = 3


def _interrupted(signum: int, _frame: FrameType | None) -> None:
    name = signal.Signals(signum).name
    os.write(2, f"kmc: interrupted by {name}; the command did not finish.\n".encode())
    os._exit(_INTERRUPTED_STATUS)  # nothing has been written yet, and an import half done is no state to unwind


def main() -> None:
    for sig in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(sig) is not signal.SIG_IGN:  # an ignored signal stays ignored, as Python leaves it
            signal.signal(sig, _interrupted)
    from kmc.cli import main as command_line

    command_line(prog_name="kmc")
