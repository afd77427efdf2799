"""A view's columns are fixed when it is made, judged against PostgreSQL: its ``*`` is
written out then, so a column added to its table later is not among them (it was), and
dropping a column the view does not read is allowed (it was 2BP01) while dropping one
it reads is refused.  A view is renamed by ALTER VIEW or ALTER TABLE; CREATE OR REPLACE
VIEW keeps its columns' names and types (42P16)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted, script_differences

SCRIPT = [
    "CREATE TABLE vx (a int, b int)",
    "INSERT INTO vx VALUES (1, 2)",
    "CREATE VIEW vxv AS SELECT * FROM vx",
    "CREATE VIEW vxw AS SELECT vx.*, a + b AS s FROM vx WHERE a > 0",
    "CREATE VIEW vxu AS SELECT * FROM vxv",
    "ALTER TABLE vx ADD COLUMN c int DEFAULT 3",
    "SELECT * FROM vxv",
    "SELECT * FROM vxw",
    "SELECT * FROM vxu",
    "ALTER TABLE vx DROP COLUMN c",
    "ALTER TABLE vx DROP COLUMN b",
    "CREATE TABLE tt5 (a int, b int)",
    "CREATE TABLE tt6 (c int, d int)",
    "CREATE VIEW vv1 AS SELECT * FROM (tt5 CROSS JOIN tt6) j(aa, bb, cc, dd)",
    "ALTER TABLE tt5 ADD COLUMN c int",
    "ALTER TABLE tt5 DROP COLUMN c",
    "ALTER TABLE tt6 DROP COLUMN c",
    "SELECT * FROM vv1",
    'CREATE TABLE "Mixed" ("Col" int, low int)',
    'CREATE VIEW mv AS SELECT * FROM "Mixed"',
    """INSERT INTO "Mixed" VALUES (1, 2)""",
    "SELECT * FROM mv",
    # a view renamed, by ALTER VIEW or ALTER TABLE (was 42809), its old name free again
    "CREATE TABLE rv (a int)",
    "INSERT INTO rv VALUES (1)",
    "CREATE VIEW rvv AS SELECT * FROM rv",
    "ALTER TABLE rvv RENAME TO rvv2",
    "SELECT * FROM rvv2",
    "SELECT * FROM rvv",
    "CREATE VIEW rvv AS SELECT a + 1 AS b FROM rv",
    "SELECT * FROM rvv",
    "ALTER VIEW rvv2 RENAME TO rvv",
    "ALTER VIEW rvv2 RENAME TO rvv3",
    "SELECT * FROM rvv3",
    "ALTER VIEW nosuch RENAME TO x",
    "ALTER VIEW rv RENAME TO x",
    # CREATE OR REPLACE VIEW keeps the columns' names and types (a type change was taken)
    "CREATE TABLE vt (a int, b int, c text)",
    "INSERT INTO vt VALUES (1, 2, 'x')",
    "CREATE VIEW vv AS SELECT a, b FROM vt",
    "CREATE OR REPLACE VIEW vv AS SELECT a, b::numeric / 3 AS b FROM vt",
    "CREATE OR REPLACE VIEW vv AS SELECT a FROM vt",
    "CREATE OR REPLACE VIEW vv AS SELECT a, c AS b FROM vt",
    "CREATE OR REPLACE VIEW vv AS SELECT a AS x, b FROM vt",
    "CREATE OR REPLACE VIEW vv AS SELECT a + 1 AS a, b * 2 AS b, c || 'y' AS c FROM vt",
    "SELECT * FROM vv",
]


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "view_columns", {}, [], {}) as pair:
        yield pair


def test_view_columns_fixed_when_made(pair: Pair) -> None:
    assert script_differences(pair, SCRIPT) == []
