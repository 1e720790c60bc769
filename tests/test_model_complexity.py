"""No function in ``model/`` has a cyclomatic complexity above 25 as radon measures it, unless it mirrors one
Kafka ``match`` and says so in its docstring ("mirrors Kafka's ..."): past that, a reader cannot hold a
function's paths in mind, and a table or a function per case reads better."""

from __future__ import annotations

import ast
from pathlib import Path

from radon.complexity import cc_visit

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 25
EXCUSE = "mirrors Kafka's"


def too_complex(source: str, where: str) -> list[str]:
    """The functions of ``source`` above :data:`LIMIT` whose docstring does not say they mirror a Kafka match."""
    docstrings = {(node.name, node.lineno): " ".join((ast.get_docstring(node) or "").split())
                  for node in ast.walk(ast.parse(source))
                  if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
    found = []
    for f in cc_visit(source):  # functions and methods (a class's total is not a function's)
        if not hasattr(f, "methods") and f.complexity > LIMIT and EXCUSE not in docstrings.get((f.name, f.lineno), ""):
            found.append(f"{where}:{f.lineno} {f.fullname} (complexity {f.complexity})")
    return found


def test_no_function_in_model_is_above_the_complexity_limit() -> None:
    """Every function in model/ is at most 25 by radon, or its docstring says it mirrors a Kafka match."""
    found = [line for path in sorted((ROOT / "model").rglob("*.py"))
             for line in too_complex(path.read_text(), str(path.relative_to(ROOT)))]
    assert not found, (f"above cyclomatic complexity {LIMIT}: {'; '.join(found)}; split them (a table, a "
                       f"function per case), or say in the docstring which Kafka match one {EXCUSE}")


def _branches(n: int) -> str:
    return "".join(f"    if x == {i}:\n        return {i}\n" for i in range(n))


def test_a_function_above_the_limit_is_named_and_a_mirrored_match_is_excused() -> None:
    """A planted function of complexity 27 is reported by name, a method too; the same with the docstring
    phrase is not."""
    plain = f"def f(x):\n{_branches(26)}    return -1\n"
    method = f"class C:\n    def g(self, x):\n{_branches(26).replace('    ', '        ')}        return -1\n"
    excused = f'def h(x):\n    """Mirrors nothing; it mirrors Kafka\'s `match`."""\n{_branches(26)}    return -1\n'
    assert too_complex(plain, "p.py") == ["p.py:1 f (complexity 27)"]
    assert too_complex(method, "m.py") == ["m.py:2 C.g (complexity 27)"]
    assert too_complex(excused, "e.py") == []
    assert too_complex(f"def f(x):\n{_branches(24)}    return -1\n", "ok.py") == []
