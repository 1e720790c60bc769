"""kmc's build: pyproject.toml declares the project; this adds the compiled modules.

The modules on the search's hot path (``COMPILED``) are compiled with Cython (pure-Python mode: the same sources, no
type declarations) into extension modules beside their sources, and ``model/compiled.json`` records the SHA-256 of
each source compiled, so that a source edited later is imported in place of its stale extension
(``model/compiled.py``). So are the functions the codec and the step generate from the state classes, written out
as modules whose names hold their sources' hashes (``model.zk.state.schema.define_functions``). A module that does
not compile (no C compiler, no Python headers) is left to its source: the install goes on, at the interpreted speed.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent

#: The compiled modules: the ZooKeeper and KRaft controllers' models and their properties.
COMPILED = ("model/zk/**/*.py", "model/kraft/*.py", "invariants/kafka_properties.py", "invariants/kraft_properties.py")

#: Cython's directives: annotations are documentation here, not C types (an ``int`` annotation would make Cython
#: refuse a bool or a subclass), and functions stay introspectable Python functions.
DIRECTIVES = {"language_level": 3, "annotation_typing": False, "binding": True}


def _sources() -> dict[str, Path]:
    """Module name -> source, relative to the project."""
    found: dict[str, Path] = {}
    for pattern in COMPILED:
        for path in sorted(ROOT.glob(pattern)):
            if path.name != "__init__.py":
                relative = path.relative_to(ROOT)
                found[".".join(relative.with_suffix("").parts)] = relative
    return found


def _generated() -> dict[str, Path]:
    """The functions the model generates from its state classes (the codec's, the step's: ``schema.define_functions``),
    written as modules under ``build/generated``: module name -> module file. Collected by importing the codec and the
    step from the sources (with attrs, which the build has); none when that fails."""
    pure = os.environ.get("KMC_PURE_PYTHON")
    os.environ["KMC_PURE_PYTHON"] = "1"  # the sources' own generated functions, not a compiled module already built
    sys.path.insert(0, str(ROOT))
    try:
        import model.zk.state.codec
        import model.zk.state.step  # noqa: F401
        from model.zk.state.schema import GENERATED
    except Exception as error:  # a build without the generated functions compiled is still a build
        print(f"the generated functions are left to exec: {error!r}", file=sys.stderr)
        return {}
    finally:
        sys.path.remove(str(ROOT))
        if pure is None:
            del os.environ["KMC_PURE_PYTHON"]
        else:
            os.environ["KMC_PURE_PYTHON"] = pure
    written: dict[str, Path] = {}
    for name, text in GENERATED:
        path = Path("build", "generated", *name.split(".")).with_suffix(".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written[name] = path
    return written


class BuildCompiled(build_ext):
    """``build_ext`` that translates the sources with Cython first and writes the manifest of what it built."""

    def finalize_options(self) -> None:
        self.built: list[str] = []
        try:
            from Cython.Build import cythonize
        except ImportError:
            self.announce("Cython is not installed: the model runs from its sources", level=3)
            self.distribution.ext_modules = []
        else:
            generated = [Extension(name, [str(path)], optional=True) for name, path in _generated().items()]
            self.distribution.ext_modules = cythonize(
                [*self.distribution.ext_modules, *generated], build_dir="build/cython", compiler_directives=DIRECTIVES,
                quiet=True, nthreads=os.cpu_count() or 1)
        super().finalize_options()
        if self.parallel is None:
            self.parallel = os.cpu_count() or 1

    def build_extension(self, ext: Extension) -> None:
        super().build_extension(ext)  # an optional extension that fails raises here, and is left out below
        self.built.append(ext.name)

    def run(self) -> None:
        super().run()
        sources = _sources()
        # the generated modules are not listed: their names hold their sources' hashes (model.compiled.generated)
        manifest = {name: hashlib.sha256((ROOT / sources[name]).read_bytes()).hexdigest()
                    for name in sorted(self.built) if name in sources}
        target = Path(self.get_ext_fullpath("model.compiled")).with_name("compiled.json")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(manifest, indent=1) + "\n")


setup(
    ext_modules=[Extension(name, [str(path)], optional=True) for name, path in _sources().items()],
    cmdclass={"build_ext": BuildCompiled},
)
