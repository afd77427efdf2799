"""TPC-H with the default onion configuration: the 22 queries answer as PostgreSQL does
while the online design builds what they ask for, and what it builds is what the offline
designer (``adaptive-db advise``) proposes for the same queries."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from adaptive_client.admin.advise import advise, read_schema
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.catalog.precomputed import canonical, parse
from adaptive_client.compile import design_wants
from tpch import harness
from tpch.queries import NUMBERS, query
from tpch.schema import TABLES

pytestmark = pytest.mark.slow


def _normal(text: str) -> str:
    return canonical(parse(text, "test"))


def test_online_design_agrees_with_the_designer(
    new_database: Callable[..., str], master_key: MasterKey, tmp_path: Path
) -> None:
    dbs = harness.build(
        new_database("tpch_od_plain"),
        new_database("tpch_od_enc"),
        master_key.hex(),
        0.01,
        tmp_path,
        config={},
    )
    with dbs.connect_plain() as plain, dbs.connect_encrypted() as enc:
        for n in NUMBERS:
            for _ in range(2):  # the first run adapts, the second runs adapted
                expected, got = harness.run(plain, n, dbs.scale), harness.run(enc, n, dbs.scale)
                assert got.columns == expected.columns, n
                assert got.rows == expected.rows, n
        online: set[tuple[str, str]] = set()
        for meta in enc.catalog.tables.values():
            for entry in meta.designed:
                what = str(entry["what"])
                is_sum = what.endswith("'s Sum onion")
                online.add((meta.name, what if is_sum else _normal(what)))
        metas = {name: enc.catalog.table(name) for name in TABLES}
    proposal = advise(read_schema(";\n".join(TABLES.values())), [query(n, 0.01) for n in NUMBERS])
    offline: set[tuple[str, str]] = set()
    for (table, column), onions in proposal.onions.items():
        if "Sum" in onions:
            offline.add((table, f"{column}'s Sum onion"))
    for (table, text), _ in proposal.precomputed.items():
        kind = proposal.precomputed_type[(table, text)]
        # (what the online design leaves out, and why: design_wants.py)
        exact = design_wants.stored_exactly(kind)
        if exact and design_wants.worth_a_column(metas[table], text, kind):
            offline.add((table, _normal(text)))
    assert online == offline
    assert any(what == _normal("l_extendedprice * (1 - l_discount)") for _, what in online)
