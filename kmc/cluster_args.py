"""Parsing the cluster arguments several commands share: ``--broker-list`` and ``--racks``.

``kmc assign``, ``kmc plan`` and ``kmc validate`` read brokers and racks the same way; bad input is a
:class:`~kmc.common.UsageProblem` (one sentence naming the value and the fix), which each command
reports in its own voice.
"""

from __future__ import annotations

from collections.abc import Collection

from kmc.common import UsageProblem


def parse_broker_list(text: str) -> tuple[int, ...]:
    """Broker ids from ``--broker-list`` ("0,1,2"), in the order given."""
    ids: list[int] = []
    for item in text.split(","):
        token = item.strip()
        if not (token.isascii() and token.isdigit()):
            raise UsageProblem(
                f"--broker-list {text!r}: {token!r} is not a broker id; "
                "give broker ids (whole numbers >= 0) separated by commas, e.g. 0,1,2."
            )
        broker = int(token)
        if broker in ids:
            raise UsageProblem(f"--broker-list {text!r}: broker {broker} is listed twice; list each broker once.")
        ids.append(broker)
    return tuple(ids)


def parse_racks(text: str, broker_ids: Collection[int] | None) -> dict[int, str]:
    """Broker id -> rack from ``--racks`` ("0:r1,1:r2"); with ``broker_ids``, every broker named must be
    one of them."""
    racks: dict[int, str] = {}
    for item in text.split(","):
        broker_text, sep, rack = (part.strip() for part in item.partition(":"))
        if not sep or not (broker_text.isascii() and broker_text.isdigit()) or not rack:
            raise UsageProblem(
                f"--racks {text!r}: {item.strip()!r} is not BROKER:RACK; "
                "give broker:rack pairs separated by commas, e.g. 0:r1,1:r2."
            )
        broker = int(broker_text)
        if broker_ids is not None and broker not in broker_ids:
            raise UsageProblem(
                f"--racks {text!r}: broker {broker} is not in --broker-list; add it there or drop its rack."
            )
        if broker in racks:
            raise UsageProblem(f"--racks {text!r}: broker {broker} is given a rack twice; give it one rack.")
        racks[broker] = rack
    return racks
