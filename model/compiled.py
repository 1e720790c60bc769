"""Which of the model's modules run compiled: the extension modules the install builds, and the sources they came from.

``pip install`` compiles the modules on the search's hot path (``setup.py``'s ``COMPILED``: the ZooKeeper and KRaft
controllers' models and their properties) with Cython into extension modules beside their sources, and writes
``compiled.json`` here: each compiled module's name and the SHA-256 of the source it was built from. Python imports
an extension module in preference to the source beside it, so a source edited after the build would be shadowed by
the module compiled from its former text. The finder this module installs (:func:`install`, from ``model`` and
``invariants``) takes a compiled module only when its source is the one it was built from, and the source otherwise
(an edit takes effect at once, at the interpreted speed, until the next install compiles it again).

``KMC_PURE_PYTHON=1`` in the environment imports every module from its source: the reference that
``tests/test_compiled.py`` compares the compiled modules with, state by state. The compiled modules are the same
Python code (Cython's pure-Python mode, no type declarations): their results are the sources' by construction, and
the test checks it.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ExtensionFileLoader, ModuleSpec, PathFinder
from importlib.util import module_from_spec, spec_from_file_location
from pathlib import Path
from types import ModuleType

#: Written by the build (``setup.py``): module name -> SHA-256 of the source compiled.
MANIFEST = Path(__file__).with_name("compiled.json")
#: The environment variable that makes every module run from its source.
PURE_PYTHON = "KMC_PURE_PYTHON"
_PACKAGES = ("model.", "invariants.")


def source_digest(path: Path) -> str:
    """The SHA-256 of a source file, as the manifest records it."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


class CompiledOrSource:
    """A meta path finder for ``model.*`` and ``invariants.*``: the extension module of a module whose source is the one
    it was compiled from, else the source."""

    def __init__(self, built: dict[str, str], pure: bool):
        self.built = built
        self.pure = pure
        #: The modules imported compiled, in the order they were imported.
        self.compiled: list[str] = []

    def find_spec(self, name: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if not name.startswith(_PACKAGES):
            return None
        spec = PathFinder.find_spec(name, path)
        if spec is None or not isinstance(spec.loader, ExtensionFileLoader) or spec.origin is None:
            return spec
        source = Path(spec.origin).with_name(name.rpartition(".")[2] + ".py")
        if not source.is_file():
            return spec
        if not self.pure and self.built.get(name) == source_digest(source):
            self.compiled.append(name)
            return spec
        return spec_from_file_location(name, source)


def install() -> CompiledOrSource:
    """The finder, put first among the interpreter's finders once per process."""
    for finder in sys.meta_path:
        if isinstance(finder, CompiledOrSource):
            return finder
    try:
        built = json.loads(MANIFEST.read_text())
    except (OSError, ValueError):
        built = {}
    finder = CompiledOrSource(built if isinstance(built, dict) else {}, os.environ.get(PURE_PYTHON, "") == "1")
    sys.meta_path.insert(0, finder)
    return finder


def generated(name: str) -> ModuleType | None:
    """The compiled module ``name`` of functions the model generates (:func:`model.zk.state.schema.define_functions`),
    imported, or None: not built, or ``KMC_PURE_PYTHON=1``. Its name holds the hash of the source it was compiled
    from, so a module found is that source's."""
    finder = install()
    parent = sys.modules.get(name.rpartition(".")[0])
    if finder.pure or parent is None:
        return None
    spec = PathFinder.find_spec(name, parent.__path__)
    if spec is None or not isinstance(spec.loader, ExtensionFileLoader):
        return None
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module
    finder.compiled.append(name)
    return module


def compiled_modules() -> tuple[str, ...]:
    """The modules this process imported compiled (none under ``KMC_PURE_PYTHON=1`` or without a build)."""
    return tuple(install().compiled)
