"""Parsing the cluster arguments several commands share: ``--broker-list`` and ``--racks``.

``kmc assign``, ``kmc plan`` and ``kmc validate`` read brokers and racks the same way; bad input is a
:class:`~kmc.common.UsageProblem` (one sentence naming the value and the fix), which each command
reports in its own voice. Values are quoted escaped and cut (:func:`model.scenario.loader.shown`), so a
message stays one line whatever was typed.
"""

from __future__ import annotations

from collections.abc import Collection

from kmc.common import UsageProblem
from model.scenario.loader import BROKER_ID_MAX, shown


def parse_broker_list(text: str) -> tuple[int, ...]:
    """Broker ids from ``--broker-list`` ("0,1,2"), in the order given; each an ``Int`` as in Kafka."""
    ids: dict[int, None] = {}  # ordered, with O(1) look-ups: a list of thousands of ids stays fast
    for item in text.split(","):
        token = item.strip()
        if not (token.isascii() and token.isdigit()):
            raise UsageProblem(
                f"--broker-list {shown(text)!r}: {shown(token)!r} is not a broker id; "
                "give broker ids (whole numbers >= 0) separated by commas, e.g. 0,1,2."
            )
        broker = int(token)
        if broker > BROKER_ID_MAX:
            raise UsageProblem(f"--broker-list {shown(text)!r}: broker id {shown(token)} is beyond Kafka's broker ids "
                               f"(an Int, at most {BROKER_ID_MAX}); use a smaller id.")
        if broker in ids:
            raise UsageProblem(f"--broker-list {shown(text)!r}: broker {broker} is listed twice; list each broker "
                               "once.")
        ids[broker] = None
    return tuple(ids)


def parse_racks(text: str, broker_ids: Collection[int] | None) -> dict[int, str]:
    """Broker id -> rack from ``--racks`` ("0:r1,1:r2"); with ``broker_ids``, every broker named must be
    one of them. Rack names are printable (they are printed in tables and messages)."""
    racks: dict[int, str] = {}
    known = None if broker_ids is None else set(broker_ids)
    for item in text.split(","):
        broker_text, sep, rack = (part.strip() for part in item.partition(":"))
        if not sep or not (broker_text.isascii() and broker_text.isdigit()) or not rack:
            raise UsageProblem(
                f"--racks {shown(text)!r}: {shown(item.strip())!r} is not BROKER:RACK; "
                "give broker:rack pairs separated by commas, e.g. 0:r1,1:r2."
            )
        if not rack.isprintable():
            raise UsageProblem(f"--racks {shown(text)!r}: the rack of broker {shown(broker_text)} holds a control "
                               "character; give printable rack names.")
        broker = int(broker_text)
        if known is not None and broker not in known:
            raise UsageProblem(
                f"--racks {shown(text)!r}: broker {shown(broker_text)} is not in --broker-list; add it there or "
                "drop its rack."
            )
        if broker in racks:
            raise UsageProblem(f"--racks {shown(text)!r}: broker {broker} is given a rack twice; give it one rack.")
        racks[broker] = rack
    return racks
