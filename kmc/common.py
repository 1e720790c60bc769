"""What every ``kmc`` command shares: one-sentence errors, run directories, interrupts, defects.

* Bad usage or input is reported as ``kmc: <one sentence>`` on stderr with exit status 2
  (:data:`explorer.results.Outcome.BAD_INPUT`), never as a traceback.
* A run directory is created inside ``--out`` under a unique id (time, a random suffix and the
  scenario's name reduced to safe characters), and locked while a run writes to it.
* Run files are written atomically with ordinary permissions (0644 under the usual umask), so an
  interrupted run never leaves a half-written report behind.
* SIGINT and SIGTERM (:class:`Interrupts`) ask a running search to stop at its next safe point;
  elsewhere, and at a second signal, they end the command at once. Either way one line and exit
  status 3 (inconclusive), never a traceback.
* An unexpected exception is a kmc defect, not a verdict: its traceback goes to a file (in the
  run directory when there is one) and the command exits with status 4 (:class:`KmcDefect`).
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import fcntl
import io
import json
import os
import re
import secrets
import signal
import stat
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import IO, Any, NoReturn

import click

from explorer.results import Outcome
from explorer.stopping import StopRequest, interrupted_reason

#: The longest scenario name a run id carries (file names are limited to 255 bytes).
RUN_NAME_MAX = 64
LOCK_NAME = ".lock"
TRACEBACK_NAME = "traceback.txt"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class UsageProblem(Exception):
    """Bad usage or input: reported as one sentence, exit status 2."""


class SafePath(click.Path):
    """click's ``Path`` that refuses, as a usage error, what the operating system cannot even look up:
    a NUL character (``os.stat`` raises ValueError) or a name too long for the file system."""

    def convert(
        self, value: str | os.PathLike[str], param: click.Parameter | None, ctx: click.Context | None
    ) -> str | bytes | os.PathLike[str]:
        if isinstance(value, str) and "\x00" in value:
            self.fail(f"{shown_path(value)!r} holds a NUL character; give a path.", param, ctx)
        try:
            return super().convert(value, param, ctx)
        except OSError as e:
            self.fail(f"{shown_path(str(value))!r} cannot be looked up ({e.strerror or e}); give a shorter path.",
                      param, ctx)


def fail(message: str) -> NoReturn:
    """Print ``kmc: <message>`` on stderr, on one line (a line break the message quotes from the input is shown
    as ``\\n``), and exit with the bad-input status (2)."""
    one_line = message.replace("\r", "\\r").replace("\n", "\\n")
    click.echo(f"kmc: {one_line}", err=True)
    sys.exit(Outcome.BAD_INPUT.exit_code)


# -- run directories ------------------------------------------------------------------------------


def safe_name(name: str) -> str:
    """``name`` reduced to what a file name may safely carry: ASCII letters, digits, ``.``, ``_``
    and ``-``, no leading dot or dash, at most :data:`RUN_NAME_MAX` characters (``run`` if nothing
    is left)."""
    reduced = _UNSAFE.sub("-", name).strip(".-")[:RUN_NAME_MAX].rstrip(".-")
    return reduced or "run"


def new_run_dir(out: Path, scenario_name: str) -> Path:
    """Create and return a fresh run directory ``<out>/<YYYYmmdd-HHMMSS>-<random>-<name>``.

    The id is unique even for runs started in the same second (a random suffix, and the directory
    is created exclusively), and it always lies inside ``out`` whatever the scenario is called.
    """
    if "\x00" in str(out):
        raise UsageProblem(f"--out {shown_path(out)} holds a NUL character; give a directory path.")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # a file, or a device such as /dev/null
        raise UsageProblem(f"--out {shown_path(out)} is not a directory; choose a directory.") from None
    except OSError as e:
        raise UsageProblem(f"--out {shown_path(out)} cannot be created ({e.strerror or e}); "
                           "choose a directory you can write to.") from None
    if not out.is_dir():
        raise UsageProblem(f"--out {shown_path(out)} is not a directory; choose a directory.")
    name = safe_name(scenario_name)
    for _ in range(100):
        candidate = out / f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}-{name}"
        try:
            candidate.mkdir()
        except FileExistsError:
            continue
        except OSError as e:
            raise UsageProblem(f"--out {shown_path(out)} does not accept a new run directory ({e.strerror or e}); "
                               "choose a directory you can write to.") from None
        assert candidate.resolve().parent == out.resolve(), candidate
        return candidate
    raise UsageProblem(f"--out {shown_path(out)}: no free run directory name after 100 tries; choose another --out.")


def shown_path(path: Path | str) -> str:
    """A path as one line of a message can show it (control characters escaped, long paths cut)."""
    text = str(path)
    if not text.isprintable():
        text = text.encode("unicode_escape").decode("ascii")
    return text if len(text) <= 200 else f"{text[:200]}…"


def refuse_links(run_dir: Path) -> None:
    """Refuse a run directory that holds a symbolic link anywhere (kmc writes none): a run's files are
    read and rewritten on resume, and a link would send those writes elsewhere."""
    for root, dirs, files in os.walk(run_dir):
        for name in (*dirs, *files):
            entry = Path(root) / name
            if entry.is_symlink():
                raise UsageProblem(f"{shown_path(entry)} is a symbolic link, which kmc never writes in a run "
                                   "directory; remove it, or start a new run.")


class RunLock:
    """An exclusive lock on a run directory while a run writes to it (``flock`` on ``.lock``).

    The lock goes with the process: a killed run leaves the directory unlocked (its ``.lock`` file
    stays, locked by no one), ready for ``--resume``; a run that ends removes the file. The file
    names the holder's process id for the message a second run gets.
    """

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / LOCK_NAME
        self._fd: int | None = None

    def acquire(self) -> None:
        # Never through a link: a symbolic link planted as .lock is refused (O_NOFOLLOW), a hard link
        # or anything but a plain file is refused before it is truncated, and a FIFO cannot block the
        # open (O_NONBLOCK). A new lock file is created exclusively.
        flags = os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
        try:
            try:
                fd = os.open(self.path, flags | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                fd = os.open(self.path, flags)
        except OSError as e:
            reason = "it is a symbolic link" if e.errno == errno.ELOOP else e.strerror or str(e)
            raise UsageProblem(f"{shown_path(self.path)} cannot be used as the run's lock ({reason}); "
                               "remove it, or choose a run directory you can write to.") from None
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            os.close(fd)
            raise UsageProblem(f"{shown_path(self.path)} is not a plain file of its own (a link or a special "
                               "file); remove it, or start a new run.")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.read(fd, 32).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise UsageProblem(f"{shown_path(self.path.parent)} is in use by another kmc run (process {holder}); "
                               "wait for it to finish, or use another run directory.") from None
        if not self._still_named(info):
            # The holder released it (and removed the file) between our open and our flock: the lock
            # is the file now at the path, if any; try again with that one.
            os.close(fd)
            self.acquire()
            return
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def _still_named(self, info: os.stat_result) -> bool:
        """Whether the file the lock was taken on is still the one at ``.lock``."""
        try:
            now = os.stat(self.path, follow_symlinks=False)
        except FileNotFoundError:
            return False
        return (now.st_dev, now.st_ino) == (info.st_dev, info.st_ino)

    def release(self) -> None:
        """Remove ``.lock`` and let it go: a finished or stopped run leaves no lock naming a dead process.
        The file is removed while it is still locked, so a run that opened it meanwhile sees it gone
        (``acquire`` checks the path still names the file it locked) and takes a fresh one."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                if self._still_named(os.fstat(self._fd)):
                    os.unlink(self.path)
            os.close(self._fd)
            self._fd = None


# -- files ----------------------------------------------------------------------------------------


def _file_mode() -> int:
    """0666 less the process's umask: what ``open()`` gives a new file (0644 under umask 022)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename: readers never see half a
    file, and the file gets the permissions an ordinary ``open()`` would give it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(fd, _file_mode())
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# -- defects --------------------------------------------------------------------------------------


class KmcDefect(Exception):
    """An unexpected error, already written down: the message names the traceback file (exit 4)."""


def write_traceback(error: BaseException, directory: Path | None) -> Path | None:
    """Write ``error``'s traceback into ``directory`` (the system's temporary directory when None or
    not writable); return the file, or None when nowhere could take it."""
    text = "".join(traceback.format_exception(error))
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    header = f"kmc {_kmc_version()} internal error at {stamp}; command: {' '.join(sys.argv)}\n\n"
    places = [directory / TRACEBACK_NAME] if directory is not None else []
    places.append(Path(tempfile.gettempdir()) / f"kmc-traceback-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.txt")
    for place in places:
        try:
            write_atomically(place, header + text)
            return place
        except OSError:
            continue
    return None


def defect_sentence(error: BaseException, written: Path | None) -> str:
    """The one line an unexpected error gets: what happened, that it is not a verdict, where the
    traceback is; a kmc defect, or the system refusing a file operation (a full disk, say)."""
    what = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}".rstrip(": ")
    where = f"the traceback is in {shown_path(written)}" if written else "no file could take the traceback"
    if isinstance(error, OSError) and error.errno is not None:
        return (f"the system refused a file operation, so the command could not finish and this is not a verdict "
                f"({shown_path(what)[:160]}); {where}.")
    return (f"internal error, a kmc defect and not a verdict ({shown_path(what)[:160]}); {where}; "
            "please report it.")


@contextlib.contextmanager
def defects_reported_in(run_dir: Path) -> Iterator[None]:
    """Turn an unexpected exception inside the block into :class:`KmcDefect`, with its traceback
    written to ``run_dir``."""
    try:
        yield
    except (KmcDefect, UsageProblem, click.ClickException, click.exceptions.Exit):
        raise
    except Exception as error:
        raise KmcDefect(defect_sentence(error, write_traceback(error, run_dir))) from error


def _kmc_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("kmc")
    except metadata.PackageNotFoundError:
        return "0+unknown"


# -- interrupts -----------------------------------------------------------------------------------


class Interrupted(BaseException):  # like KeyboardInterrupt, which it replaces
    """SIGINT or SIGTERM ended a command outside a search (or a second signal arrived)."""

    def __init__(self, signal_name: str) -> None:
        super().__init__(signal_name)
        self.signal_name = signal_name


class Interrupts:
    """SIGINT and SIGTERM while a ``kmc`` command runs.

    While a run goes on (:meth:`deferred`: its search, then its reports), the first signal asks the
    search to stop at its next safe point (:attr:`stop`); the search then returns an INCONCLUSIVE
    result saying "interrupted", which is reported like any other (a search that had finished keeps
    its verdict, and its reports are written). A second signal, or one outside a search, raises :class:`Interrupted`
    at once (and during a search ends the process after one line, leaving the run directory as its
    last complete level left it).
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, stream: IO[str] | None = None) -> None:
        self.stop = StopRequest()
        self._deferring = False
        self._resume_hint = ""
        self._previous: dict[int, object] = {}
        self._stream = stream

    def install(self) -> None:
        """Handle the signals in this process (only the main thread may; elsewhere nothing changes)."""
        try:
            for sig in self.SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle)
        except ValueError:
            self._previous.clear()

    def uninstall(self) -> None:
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)  # type: ignore[arg-type]
        self._previous.clear()

    @contextlib.contextmanager
    def deferred(self, resume_hint: str = "") -> Iterator[StopRequest]:
        """While the block runs, a first signal asks :attr:`stop` to stop the search."""
        self._deferring, self._resume_hint = True, resume_hint
        try:
            yield self.stop
        finally:
            self._deferring = False

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if self._deferring and self.stop.reason is None:
            self._say(f"kmc: {name} received; stopping at the next safe point (send it again to stop at once).")
            self.stop.request(interrupted_reason(name))
            return
        if self._deferring:
            hint = f"; resume with: {self._resume_hint}" if self._resume_hint else ""
            self._say(f"kmc: interrupted again by {name}: stopped at once, without a report{hint}")
            os._exit(Outcome.INCONCLUSIVE.exit_code)
        raise Interrupted(name)

    def _say(self, line: str) -> None:
        """Write ``line`` from a signal handler: straight to the file descriptor when there is one, as
        the handler may have interrupted a buffered write to the same stream."""
        stream = self._stream or sys.stderr
        try:
            os.write(stream.fileno(), f"{line}\n".encode())
        except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
            stream.write(f"{line}\n")
            stream.flush()


def read_summary(run_dir: Path, what_else: str = "") -> dict[str, Any]:
    """The ``summary.json`` of a run directory as a JSON object, or exit 2 with one sentence naming the file:
    missing (``what_else`` names what else the command accepts), unreadable, nested too deeply, or not an
    object. ``kmc report`` and ``kmc ui`` read run directories through it."""
    summary = run_dir / "summary.json"
    if not summary.is_file():
        fail(f"{str(run_dir)!r} has no summary.json; give a run directory that kmc explore wrote "
             f"(reports/runs/<run-id>){what_else}.")
    try:
        document = json.loads(summary.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        fail(f"{str(summary)!r} cannot be read as JSON ({e}); re-run the exploration to write it again.")
    except RecursionError:
        fail(f"{str(summary)!r} nests arrays or objects too deeply to be a kmc summary; re-run the exploration.")
    if not isinstance(document, dict):
        fail(f"{str(summary)!r} is not a kmc summary (not a JSON object); re-run the exploration.")
    return document
