"""The one place that builds a SparkSession for kmc.

Every Spark entry point (``kmc explore --engine spark``, the ``spark-submit`` driver
:mod:`kmc.spark_main`, the tests and the benchmark) gets its session from :func:`build_session`,
so the settings measured on a 2-core machine live here once:

* workers run the driver's own interpreter (``PYSPARK_PYTHON = sys.executable``); otherwise they
  start the system ``python3``, which cannot import kmc or its dependencies;
* ``SPARK_LOCAL_IP=127.0.0.1`` for ``local[...]`` and loopback masters (silences the hostname
  warning and keeps a loopback cluster on loopback);
* no web UI and no console progress bar unless asked; Spark's own logs at ERROR, including the
  JVM start-up lines (a log4j2 file written next to the checkpoints);
* the JVM's own output (what the JVM and ``spark-submit`` print before and besides log4j, such as
  Java's warnings about incubator modules or native libraries) goes to :data:`JVM_LOG` next to the
  checkpoints, not to the terminal, where it would break into kmc's live display; a JVM that
  cannot start is reported with the end of that file;
* few shuffle partitions: the default 200 doubles the time of a level on two cores. A local master
  gets twice its cores, here; on a cluster, whose executors register after the session starts, the
  search sets twice the cores registered at each Spark level (:mod:`spark_explore.bfs`), unless the
  caller or ``spark-submit`` gave a number;
* a checkpoint directory under the run directory;
* the caller's SIGINT handler is kept: PySpark replaces it with one that calls the JVM from inside
  the signal handler and raises KeyboardInterrupt inside whatever call to the JVM is running,
  which prints several tracebacks (the JVM ignores SIGINT, and PySpark's worker daemon runs in a
  process group of its own, so Ctrl-C reaches only kmc's driver, which stops the job itself).

Everything a local session opens listens on loopback (``SPARK_LOCAL_IP``), the web UI included
when it is asked for.

Settings given explicitly with ``conf`` always win over these defaults, and so do the settings
``spark-submit`` was given (its ``--conf`` options and ``spark-defaults.conf``).

Starting a session costs several seconds (a JVM, then Python workers on the first job), which is
more than a small search takes. :class:`SessionStart` builds it in a background thread, while the
driver validates the run directory and expands the first, small levels itself; the search asks for
the session only when a level is large enough to be worth a Spark job, and a search that never
needs one never waits for it.
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"
APP_NAME = "kmc"
#: The file a local session's JVM writes its standard output and error to (beside the checkpoints).
JVM_LOG = "spark-jvm.log"

#: Spark's log4j2 configuration with everything below ERROR dropped. Spark's default profile logs
#: at WARN and prints several lines per run that say nothing about the model.
_QUIET_LOG4J2 = """\
# A driver started by PySpark prints "Setting default log level" unless the logger of Spark's
# classes is configured explicitly at the root's level, hence the org.apache.spark line.
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n%ex
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = error
logger.jetty.name = org.sparkproject.jetty
logger.jetty.level = error
logger.spark.name = org.apache.spark
logger.spark.level = error
"""


def is_local_master(master: str) -> bool:
    """True for ``local``, ``local[N]`` and ``local[*]`` (one JVM on this machine)."""
    return master == "local" or master.startswith("local[")


def is_loopback_master(master: str) -> bool:
    """True for a standalone master on this machine (``spark://127.0.0.1:…``, ``spark://localhost:…``)."""
    return master.startswith(("spark://127.0.0.1", "spark://localhost"))


def local_cores(master: str) -> int:
    """The number of task slots of a ``local[...]`` master (``local[*]`` is the machine's cores)."""
    if master == "local":
        return 1
    inside = master[len("local[") :].split("]")[0].split(",")[0]
    if inside == "*":
        return os.cpu_count() or 1
    return max(int(inside), 1)


def master_cores(master: str | None) -> int:
    """The tasks ``master`` runs at once, as kmc plans for them before a session runs: a local master's cores, and
    two for any other (a cluster's executors are not known before they register; None: the master
    ``spark-submit`` chose)."""
    return local_cores(master) if master is not None and is_local_master(master) else 2


def default_conf(master: str, *, ui: bool, log4j_file: Path | None) -> dict[str, str]:
    """The settings kmc applies unless the caller overrides them (see the module docstring)."""
    conf = {
        "spark.app.name": APP_NAME,
        "spark.ui.enabled": "true" if ui else "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.adaptive.enabled": "true",
        # Each level is written as one file per shuffle partition and the next level is expanded
        # one task per file: coalescing the (small) shuffle partitions of a level into one would
        # leave a single Python worker expanding the whole next level.
        "spark.sql.adaptive.coalescePartitions.enabled": "false",
        # 1g runs out on ~30M successor rows; 4g is comfortable on a 24 GiB machine.
        "spark.driver.memory": "4g",
        "spark.sql.execution.arrow.maxRecordsPerBatch": "4096",
        "spark.python.worker.reuse": "true",
        # Each level reads the fingerprints of every earlier level: list their directories on the
        # driver rather than with a Spark job once there are more than 32 of them.
        "spark.sql.sources.parallelPartitionDiscovery.threshold": "4096",
    }
    if is_local_master(master):
        # Two to four partitions per level measured best on two cores; more partitions only add task overhead. A
        # cluster's are left to the search, which sets them from the executors' cores once they have registered
        # (and Spark's default parallelism is then those cores).
        partitions = str(max(2, 2 * local_cores(master)))
        conf["spark.sql.shuffle.partitions"] = partitions
        conf["spark.default.parallelism"] = partitions
    if log4j_file is not None:
        option = f"-Dlog4j2.configurationFile=file:{log4j_file}"
        conf["spark.driver.extraJavaOptions"] = option
        conf["spark.executor.extraJavaOptions"] = option
    return conf


def write_quiet_log4j(directory: Path) -> Path:
    """Write kmc's quiet log4j2 configuration into ``directory`` and return its path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "log4j2-kmc.properties"
    if not path.exists() or path.read_text() != _QUIET_LOG4J2:
        path.write_text(_QUIET_LOG4J2)
    return path


def prepare_environment(master: str) -> None:
    """Set the environment the driver and the workers on this machine need, before the JVM starts.

    Workers on this machine also get the driver's import path, so that a model factory defined
    outside the installed packages (a test's toy model, a benchmark) unpickles there too.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if is_local_master(master) or is_loopback_master(master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        paths = [*inherited, *(p for p in sys.path if p and p not in inherited and Path(p).is_dir())]
        os.environ["PYTHONPATH"] = os.pathsep.join(paths)


def build_session(
    master: str | None = DEFAULT_MASTER,
    conf: Mapping[str, str] | None = None,
    *,
    checkpoint_dir: Path | str | None = None,
    ui: bool = False,
    app_name: str = APP_NAME,
) -> SparkSession:
    """Build the SparkSession kmc runs on, or return the one already running in this process.

    Under ``spark-submit`` the master it was given is kept whatever ``master`` says (so that
    ``--master yarn`` is not overridden by a caller's ``local[*]`` default); elsewhere ``master``
    None means ``local[*]``. ``conf`` entries override
    kmc's defaults. Spark allows one session per JVM: a running one is returned as it is (with
    its own master and settings), only its checkpoint directory is set.
    """
    from pyspark.sql import SparkSession

    _wait_for_background_starts()
    active = SparkSession.getActiveSession()
    if active is not None:
        if checkpoint_dir is not None:
            active.sparkContext.setCheckpointDir(str(Path(checkpoint_dir) / "checkpoints"))
        return active
    under_submit = "PYSPARK_GATEWAY_PORT" in os.environ  # spark-submit started the JVM already
    if under_submit:
        master = None  # what spark-submit was told wins over any default of the caller
    elif master is None:
        master = DEFAULT_MASTER
    effective_master = master or ""
    prepare_environment(effective_master)
    log_dir = Path(checkpoint_dir) if checkpoint_dir is not None else Path(tempfile.gettempdir()) / "kmc"
    quiet = is_local_master(effective_master) or is_loopback_master(effective_master)
    log4j_file = write_quiet_log4j(log_dir) if quiet and not under_submit else None
    settings = default_conf(effective_master, ui=ui, log4j_file=log4j_file)
    settings["spark.app.name"] = app_name
    if under_submit:
        # The launcher already started the JVM: memory and Java options given here would be
        # ignored, and what spark-submit was told must win over kmc's defaults (a session's
        # builder sets its settings over the ones the JVM was started with).
        from pyspark import SparkConf, SparkContext

        SparkContext._ensure_initialized()  # connects to spark-submit's JVM, whose SparkConf holds what it was told
        submitted = SparkConf()
        for key in [key for key in settings if submitted.contains(key)]:
            del settings[key]
        for key in ("spark.driver.memory", "spark.driver.extraJavaOptions", "spark.app.name"):
            settings.pop(key, None)
    settings.update(conf or {})
    if not under_submit:
        _launch_jvm(master, settings, log_dir / JVM_LOG)
    builder = SparkSession.builder
    if master is not None:
        builder = builder.master(master)
    for key, value in settings.items():
        builder = builder.config(key, value)
    in_main_thread = threading.current_thread() is threading.main_thread()
    caller_sigint = signal.getsignal(signal.SIGINT) if in_main_thread else None
    session = builder.getOrCreate()
    if in_main_thread and caller_sigint is not None:
        signal.signal(signal.SIGINT, caller_sigint)
    session.sparkContext.setLogLevel("ERROR")
    if checkpoint_dir is not None:
        session.sparkContext.setCheckpointDir(str(Path(checkpoint_dir) / "checkpoints"))
    return session


def _launch_jvm(master: str | None, settings: Mapping[str, str], log: Path) -> None:
    """Start the session's JVM (PySpark's own launcher, given the settings the session is built
    with, as it would be) with its standard output and error in ``log``; a JVM already running in
    this process is kept. PySpark starts it with the terminal's: Java prints warnings there."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None:
        return
    conf = SparkConf(loadDefaults=False)
    if master is not None:
        conf.setMaster(master)
    conf.setAll(list(settings.items()))
    log.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    with os.fdopen(fd, "ab") as output:
        try:
            gateway = launch_gateway(conf, popen_kwargs={"stdout": output, "stderr": output})
        except Exception as e:
            raise RuntimeError(f"Spark's JVM did not start; the end of {log}:\n{_tail(log)}") from e
    SparkContext._ensure_initialized(gateway=gateway, conf=conf)


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return "(unreadable)"


# Sessions being started in the background in this process: a session built meanwhile in another
# thread would race with them for the one SparkContext a process may have.
_STARTING: set[SessionStart] = set()
_STARTING_LOCK = threading.Lock()


def _wait_for_background_starts() -> None:
    if threading.current_thread().name == SessionStart.THREAD_NAME:
        return
    with _STARTING_LOCK:
        starting = list(_STARTING)
    for start in starting:
        start.wait()


class SessionStart:
    """A SparkSession being built in a background thread (:func:`build_session`'s, with the same
    arguments), then warmed up by ``warm_up`` (a first job, so that the first level does not pay for
    starting the Python workers). A session already running in this thread is used as it is.

    :meth:`get` waits for it; :meth:`release` stops a session this object started, at once if it is
    up, or as soon as it is otherwise, without waiting for it.
    """

    THREAD_NAME = "kmc-spark-session"

    def __init__(
        self,
        master: str | None = DEFAULT_MASTER,
        conf: Mapping[str, str] | None = None,
        *,
        checkpoint_dir: Path | str | None = None,
        ui: bool = False,
        warm_up: Callable[[SparkSession], None] | None = None,
    ) -> None:
        from pyspark.sql import SparkSession

        self._session: SparkSession | None = None
        self._error: BaseException | None = None
        self._stop_when_up = False
        self._lock = threading.Lock()
        self._done = threading.Event()
        _wait_for_background_starts()
        self.started_here = SparkSession.getActiveSession() is None
        if not self.started_here:
            self._session = build_session(master, conf, checkpoint_dir=checkpoint_dir, ui=ui)
            self._done.set()
            return
        with _STARTING_LOCK:
            _STARTING.add(self)
        threading.Thread(target=self._start, args=(master, conf, checkpoint_dir, ui, warm_up),
                         name=self.THREAD_NAME, daemon=True).start()

    def _start(self, master: str | None, conf: Mapping[str, str] | None, checkpoint_dir: Path | str | None,
               ui: bool, warm_up: Callable[[SparkSession], None] | None) -> None:
        session = None
        try:
            session = build_session(master, conf, checkpoint_dir=checkpoint_dir, ui=ui)
            if warm_up is not None:
                warm_up(session)
        except BaseException as e:  # handed to the thread that asks for the session
            self._error = e
        with self._lock:
            self._session = session
            stop = self._stop_when_up
        if stop and session is not None:
            session.stop()
        with _STARTING_LOCK:
            _STARTING.discard(self)
        self._done.set()

    @property
    def ready(self) -> bool:
        """True once the session is up (or failed to start)."""
        return self._done.is_set()

    def wait(self) -> None:
        self._done.wait()

    def get(self) -> SparkSession:
        """The session, once it is up; raises what starting it raised."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        assert self._session is not None
        return self._session

    def release(self, *, stop: bool) -> None:
        """Stop the session if this object started it and ``stop`` is true (when it is up)."""
        if not (stop and self.started_here):
            return
        with self._lock:
            if not self._done.is_set() and self._session is None:
                self._stop_when_up = True
                return
            session = self._session
        if session is not None:
            session.stop()
