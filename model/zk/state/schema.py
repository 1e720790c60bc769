"""What the state classes declare about their fields, and how the code that walks every field reads it.

A state field is declared once, in its attrs class in :mod:`model.zk.state.values`. The canonical
encoding (:mod:`model.zk.state.codec`), the step's thaw and freeze (:mod:`model.zk.state.step`) and
the broker renaming of symmetry reduction (:mod:`model.zk.symmetry`) are derived from those classes
when they are imported, from two things a declaration says beyond its Python type:

* :data:`BrokerId`, an ``int`` annotated as a broker id, wherever one occurs in a field's type
  (``tuple[tuple[BrokerId, int], ...]``): symmetry reduction renames exactly those ints;
* a field's *shape* (metadata :data:`SET`, :data:`MAP`): a tuple the model keeps sorted, as
  Kafka keeps a set or a map, which a step thaws into a ``set`` or a ``dict`` and a renaming sorts
  again. Any other tuple is an ordered sequence (replicas, an ISR, a queue).

Fields declared with ``eq=False`` are annotations of a state, not part of its identity: nothing
here encodes, compares or renames them.
"""

from __future__ import annotations

import enum
import hashlib
import types
import typing
from collections.abc import Callable
from functools import cache
from typing import Annotated, Any

import attrs

from model import compiled


class _BrokerIdMark:
    def __repr__(self) -> str:
        return "BROKER_ID"


#: The mark :data:`BrokerId` carries in its ``Annotated`` metadata.
BROKER_ID = _BrokerIdMark()

#: A broker id: an ``int`` to type checkers, a name symmetry reduction renames.
BrokerId = Annotated[int, BROKER_ID]


class Shape(enum.Enum):
    """How the model keeps a tuple field (the key ``"shape"`` of its attrs metadata)."""

    SEQUENCE = "sequence"  # ordered as the model appends (the default)
    SET = "set"  # sorted, without duplicates
    MAP = "map"  # pairs (key, value) or values with a key attribute, sorted by key, keys unique


SHAPE = "shape"
SORT_KEY = "sort_key"  # a MAP of attrs values: the attribute that is their key


#: The metadata of a field holding a set: a tuple kept sorted (a step thaws it into a ``set``).
SET: dict[str, Any] = {SHAPE: Shape.SET}
#: The metadata of a field holding a map: (key, value) pairs kept sorted by key (a step thaws it into a ``dict``).
MAP: dict[str, Any] = {SHAPE: Shape.MAP}
#: The metadata of a field holding values keyed by their ``id`` attribute, kept sorted by it.
MAP_BY_ID: dict[str, Any] = {SHAPE: Shape.MAP, SORT_KEY: "id"}


@attrs.frozen
class StateField:
    """One field of a state class as the derived code reads it: its name, its resolved type (with
    ``Annotated`` marks kept) and its shape."""

    name: str
    type: Any
    shape: Shape
    sort_key: str | None


@cache
def state_fields(cls: type) -> tuple[StateField, ...]:
    """The fields of a state class that make its identity (``eq=True``), in declaration order."""
    hints = typing.get_type_hints(cls, include_extras=True)
    return tuple(StateField(f.name, hints[f.name], f.metadata.get(SHAPE, Shape.SEQUENCE), f.metadata.get(SORT_KEY))
                 for f in attrs.fields(cls) if f.eq)


# ---- reading a field's type ----

def is_broker_id(t: Any) -> bool:
    return typing.get_origin(t) is Annotated and BROKER_ID in t.__metadata__


def strip(t: Any) -> Any:
    """The type without its ``Annotated`` marks (``BrokerId`` -> ``int``)."""
    return t.__origin__ if typing.get_origin(t) is Annotated else t


def sequence_of(t: Any) -> Any | None:
    """``X`` for ``tuple[X, ...]``; None for any other type."""
    t = strip(t)
    args = typing.get_args(t)
    if typing.get_origin(t) is tuple and len(args) == 2 and args[1] is Ellipsis:
        return args[0]
    return None


def record_of(t: Any) -> tuple[Any, ...] | None:
    """``(A, B, ...)`` for a fixed-length ``tuple[A, B, ...]``; None for any other type."""
    t = strip(t)
    args = typing.get_args(t)
    if typing.get_origin(t) is tuple and not (len(args) == 2 and args[1] is Ellipsis):
        return args
    return None


def optional_of(t: Any) -> Any | None:
    """``X`` for ``X | None``; None for any other type."""
    t = strip(t)
    if typing.get_origin(t) in (typing.Union, types.UnionType):
        rest = [a for a in typing.get_args(t) if a is not type(None)]
        if len(rest) == 1 and len(typing.get_args(t)) == 2:
            return rest[0]
    return None


def is_state_class(t: Any) -> bool:
    return isinstance(t, type) and attrs.has(t)


def mentions(t: Any, predicate: Callable[[Any], bool]) -> bool:
    """Whether ``predicate`` holds for the type or a type inside it (through tuples, optionals and the
    fields of state classes)."""
    if predicate(t):
        return True
    inner = sequence_of(t) or optional_of(t)
    if inner is not None:
        return mentions(inner, predicate)
    record = record_of(t)
    if record is not None:
        return any(mentions(a, predicate) for a in record)
    t = strip(t)
    return is_state_class(t) and any(mentions(f.type, predicate) for f in state_fields(t))


#: The sources :func:`define_functions` was given in this process, in order: (module name, module text), what the
#: install compiles (``setup.py`` imports the codec and the step to collect them).
GENERATED: list[tuple[str, str]] = []


def generated_module(source: str, namespace: dict[str, Any]) -> tuple[str, str]:
    """The name and text of the module that defines the functions of ``source``: the names ``namespace`` gives
    them first (each ``None``, set when the module is used, so that a compiler sees them as the module's globals),
    then ``source``. The name holds the SHA-256 of the text, so a module compiled from it is the code of these very
    functions."""
    text = "".join(f"{key} = None\n" for key in namespace if key.isidentifier() and not key.startswith("__")) + source
    return f"model.zk.state.generated_{hashlib.sha256(text.encode()).hexdigest()[:20]}", text


def define_functions(source: str, name: str, namespace: dict[str, Any]) -> dict[str, Any]:
    """Define the functions of ``source`` in ``namespace`` and return it: the model's one use of ``exec``.

    ``source`` is generated from the state classes' declarations (their fields, types and metadata), never
    from a scenario, a run directory or any other input, exactly as attrs and dataclasses generate a class's
    ``__init__``: the codec's part writers and readers and the step's thaw and freeze functions are written as
    the straight-line code one would write by hand, because they are the model's hot path (a derivation by
    loops over the fields made ``next_state`` 18 % slower). ``tests/test_reliability_security.py`` allows
    this function, and only it.

    The install compiles these functions too (``setup.py``, :mod:`model.compiled`): where the module compiled from
    this very source is there (:func:`generated_module`: its name holds the text's hash), the functions are its own,
    its globals given ``namespace``; else, and with ``KMC_PURE_PYTHON=1``, they are defined by ``exec``."""
    module_name, text = generated_module(source, namespace)
    GENERATED.append((module_name, text))
    module = compiled.generated(module_name)
    if module is None:
        exec(compile(source, f"<{name}: generated from the state classes>", "exec"), namespace)
        return namespace
    defined = {key: value for key, value in vars(module).items() if getattr(value, "__module__", None) == module_name}
    for key, value in namespace.items():
        if key not in defined:
            setattr(module, key, value)
    namespace.update(defined)
    return namespace
