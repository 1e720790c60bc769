"""The ``spark-submit`` equivalent of a Spark exploration (``kmc explore --print-spark-submit``).

On a YARN or Kubernetes cluster kmc does not start its own session: ``spark-submit`` starts the
driver, which runs the same ``kmc explore`` command. This module writes what that needs into one
directory and returns the command line:

* a zip of the packages the caller names, for ``--py-files``, so executors import the same code as
  the driver; written deterministically (sorted entries, fixed timestamps);
* ``main.py``: a copy of the caller's driver entry point;
* the scenario file, shipped with ``--files``.

It knows nothing of what the packages or the scenario contain: the composition root
(:mod:`kmc.compose`) says which packages, which scenario file and which entry point.

The run directory must be a path that the driver and every executor see alike (a shared volume):
the levels are written by the executors and read back by the driver.
"""

from __future__ import annotations

import importlib.util
import shlex
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from spark_explore.session import write_quiet_log4j

PACKAGE_ZIP = "kmc-packages.zip"
ENTRY_POINT = "main.py"
DEFAULT_SUBMIT_DIR = Path("kmc-spark-submit")
DEFAULT_RUN_ROOT = "/mnt/kmc-runs"

# Zip entries get a fixed timestamp so that the same sources give the same zip.
_ZIP_TIME = (2020, 1, 1, 0, 0, 0)


def package_zip(destination: Path, packages: Sequence[str], package_data: Mapping[str, Sequence[str]]) -> Path:
    """Write the packages into a zip for ``--py-files``: their modules (``*.py`` in folders that are Python
    packages) and their package data (``package_data``: dotted package name -> glob patterns, as in
    setuptools' ``package-data``), nothing else.

    A checkout's package folders also hold what runs leave there (``kmc explore`` writes under
    ``reports/runs`` by default: Parquet levels, reports, replay scripts), which executors never read and
    which made the zip, and the command that prints it, as large and slow as those runs.
    """
    destination.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(destination, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for package in packages:
            root = _package_dir(package)
            files = set(_module_files(root))
            for name, patterns in package_data.items():
                if name == package or name.startswith(f"{package}."):
                    base = root.joinpath(*name.split(".")[1:])
                    files.update(p for pattern in patterns for p in base.glob(pattern) if p.is_file())
            for path in sorted(files):
                entry = zipfile.ZipInfo(str(Path(package) / path.relative_to(root)), date_time=_ZIP_TIME)
                entry.compress_type = zipfile.ZIP_DEFLATED
                entry.external_attr = 0o644 << 16
                archive.writestr(entry, path.read_bytes())
    return destination


def _module_files(folder: Path) -> list[Path]:
    """The ``*.py`` files of a package folder and of its sub-packages (folders with an ``__init__.py``)."""
    files = sorted(folder.glob("*.py"))
    for sub in sorted(folder.iterdir()):
        if sub.is_dir() and (sub / "__init__.py").is_file():
            files += _module_files(sub)
    return files


def _package_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ValueError(f"package {package!r} is not importable here; install kmc (pip install -e .) first")
    return Path(next(iter(spec.submodule_search_locations)))


def master_options(master: str) -> list[str]:
    """The ``spark-submit`` options that go with a master URL."""
    if master == "yarn":
        # Client mode keeps the driver (and so the run directory it reads) on this machine.
        return ["--master", "yarn", "--deploy-mode", "client"]
    if master.startswith("k8s://"):
        return [
            "--master", master,
            "--deploy-mode", "cluster",
            "--conf", "spark.kubernetes.container.image=<image with Python 3.11-3.13, pyspark, attrs>",
            "--conf", "spark.kubernetes.driver.volumes.persistentVolumeClaim.kmc-runs.options.claimName=kmc-runs",
            "--conf", f"spark.kubernetes.driver.volumes.persistentVolumeClaim.kmc-runs.mount.path={DEFAULT_RUN_ROOT}",
            "--conf", "spark.kubernetes.executor.volumes.persistentVolumeClaim.kmc-runs.options.claimName=kmc-runs",
            "--conf", f"spark.kubernetes.executor.volumes.persistentVolumeClaim.kmc-runs.mount.path={DEFAULT_RUN_ROOT}",
            # Cluster mode uploads the zip, the entry point and the scenario there first.
            "--conf", "spark.kubernetes.file.upload.path=<s3a://bucket/kmc-upload>",
        ]  # fmt: skip
    if master.startswith("spark://"):
        return ["--master", master, "--deploy-mode", "client"]
    if master == "local" or master.startswith("local["):
        return ["--master", master]
    raise ValueError(
        f"unknown Spark master {master!r}; use yarn, k8s://https://HOST:PORT, spark://HOST:PORT or local[*]"
    )


def spark_submit_arguments(
    *,
    scenario_file: Path,
    entry_point: Path,
    packages: Sequence[str],
    package_data: Mapping[str, Sequence[str]],
    master: str = "yarn",
    conf: Mapping[str, str] | None = None,
    max_depth: int | None = None,
    max_states: int | None = None,
    submit_dir: Path = DEFAULT_SUBMIT_DIR,
    run_root: str = DEFAULT_RUN_ROOT,
    fingerprint_bits: int = 64,
    spark_submit: str = "spark-submit",
) -> list[str]:
    """Write the zip, the entry point and the scenario into ``submit_dir``; return the command line."""
    options, application = _submit_parts(
        scenario_file, entry_point, packages, package_data, master, conf or {}, max_depth, max_states, submit_dir,
        run_root, fingerprint_bits,
        spark_submit,
    )
    return [*options, *application]


def spark_submit_command(
    *,
    scenario_file: Path,
    entry_point: Path,
    packages: Sequence[str],
    package_data: Mapping[str, Sequence[str]],
    master: str = "yarn",
    conf: Mapping[str, str] | None = None,
    max_depth: int | None = None,
    max_states: int | None = None,
    submit_dir: Path = DEFAULT_SUBMIT_DIR,
    run_root: str = DEFAULT_RUN_ROOT,
    fingerprint_bits: int = 64,
) -> str:
    """The command line of :func:`spark_submit_arguments` as shell text, with a note on what it needs."""
    options, application = _submit_parts(
        scenario_file, entry_point, packages, package_data, master, conf or {}, max_depth, max_states, submit_dir,
        run_root, fingerprint_bits,
        "spark-submit",
    )
    return "\n".join(
        [
            f"# Wrote {submit_dir}/{PACKAGE_ZIP} ({', '.join(packages)}), {submit_dir}/{ENTRY_POINT} and the scenario.",
            "# Driver and executors need one Python, 3.11 to 3.13, with pyspark, pyarrow, pandas and attrs (the driver",
            f"# also click, rich and jinja2); {run_root} must be mounted on the driver and every executor.",
            f"# Each run writes {run_root}/<run-id>/summary.json, report.txt and its level Parquet.",
            " \\\n  ".join([*_option_lines(options), *_option_lines(application)]),
        ]
    )


def _submit_parts(
    scenario: Path,
    entry_point: Path,
    packages: Sequence[str],
    package_data: Mapping[str, Sequence[str]],
    master: str,
    conf: Mapping[str, str],
    max_depth: int | None,
    max_states: int | None,
    submit_dir: Path,
    run_root: str,
    fingerprint_bits: int,
    spark_submit: str,
) -> tuple[list[str], list[str]]:
    """(spark-submit and its options, the application and its options), files written."""
    options = [spark_submit, *master_options(master)]
    for key, value in sorted(conf.items()):
        options += ["--conf", f"{key}={value}"]
    scenario_file = _copy_scenario(scenario, submit_dir)
    archive = package_zip(submit_dir / PACKAGE_ZIP, packages, package_data)
    entry = submit_dir / ENTRY_POINT
    entry.write_text(entry_point.read_text())
    options += ["--py-files", str(archive), "--files", str(scenario_file)]
    if "cluster" not in master_options(master):
        # The driver runs here: keep Spark's start-up chatter out of the output, as kmc explore does.
        quiet = write_quiet_log4j(submit_dir).resolve()
        options += ["--driver-java-options", f"-Dlog4j2.configurationFile=file:{quiet}"]
    # spark-submit merges the driver's stderr (progress) into its stdout, so the report printed
    # there is the text one; summary.json in the run directory has the JSON.
    application = [str(entry), scenario_file.name, "--out", run_root]
    if max_depth is not None:
        application += ["--max-depth", str(max_depth)]
    if max_states is not None:
        application += ["--max-states", str(max_states)]
    if fingerprint_bits != 64:
        application += ["--fingerprint-bits", str(fingerprint_bits)]
    return options, application


def _option_lines(words: Sequence[str]) -> list[str]:
    """Words grouped one option (with its value) per line, quoted for a POSIX shell."""
    lines: list[list[str]] = []
    for word in words:
        if word.startswith("--") or not lines or (lines[-1][0].startswith("--") and len(lines[-1]) == 2):
            lines.append([])
        lines[-1].append(shlex.quote(word))
    return [" ".join(line) for line in lines]


def _copy_scenario(scenario: Path, submit_dir: Path) -> Path:
    """A copy of the scenario file in ``submit_dir``, shipped to the driver with ``--files``."""
    submit_dir.mkdir(parents=True, exist_ok=True)
    target = submit_dir / scenario.name
    target.write_text(scenario.read_text())
    return target
