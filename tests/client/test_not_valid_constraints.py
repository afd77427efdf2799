"""ADD CONSTRAINT ... NOT VALID, judged against PostgreSQL: a check or a foreign key the
rows already there need not meet, enforced on the rows written after (a check was
rejected over the existing rows, then never made, so later violating rows were stored);
a key cannot be NOT VALID (0A000); a check the rows violate is reported under its own
name, not the server's; an unnamed check (``ADD CHECK (...)``) takes PostgreSQL's
name."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted, script_differences

SCRIPT = [
    "CREATE TABLE ck (b int)",
    "INSERT INTO ck VALUES (5)",
    "ALTER TABLE ck ADD CONSTRAINT b_gt_10 CHECK (b > 10) NOT VALID",
    "INSERT INTO ck VALUES (6)",
    "INSERT INTO ck VALUES (11)",
    "SELECT b FROM ck ORDER BY b",
    "ALTER TABLE ck ADD CONSTRAINT b_gt_20 CHECK (b > 20)",
    "ALTER TABLE ck ADD CONSTRAINT u UNIQUE (b) NOT VALID",
    "CREATE TABLE p (id int PRIMARY KEY)",
    "CREATE TABLE c (pid int)",
    "INSERT INTO p VALUES (1)",
    "INSERT INTO c VALUES (1), (2)",
    "ALTER TABLE c ADD CONSTRAINT c_fk FOREIGN KEY (pid) REFERENCES p NOT VALID",
    "INSERT INTO c VALUES (3)",
    "INSERT INTO c VALUES (1)",
    "SELECT pid FROM c ORDER BY pid",
    "ALTER TABLE c ADD CONSTRAINT c_fk2 FOREIGN KEY (pid) REFERENCES p",
    # an unnamed check (was refused: the SQL parser read it only named)
    "CREATE TABLE uc (b int, c int)",
    "INSERT INTO uc VALUES (5, 1)",
    "ALTER TABLE uc ADD CHECK (b < 0)",
    "ALTER TABLE uc ADD CHECK (b > 0)",
    "INSERT INTO uc VALUES (-1, 1)",
    "ALTER TABLE uc ADD CHECK (c > 0) NOT VALID",
    "INSERT INTO uc VALUES (7, -1)",
    "SELECT b, c FROM uc ORDER BY b",
]


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "not_valid", {}, [], {}) as pair:
        yield pair


def test_not_valid_constraints_as_in_postgresql(pair: Pair) -> None:
    assert script_differences(pair, SCRIPT) == []


def test_a_violated_check_is_reported_by_its_name(pair: Pair) -> None:
    _, enc = pair
    enc.execute("CREATE TABLE v (b int)")
    enc.execute("INSERT INTO v VALUES (1)")
    with pytest.raises(Exception) as caught:
        enc.execute("ALTER TABLE v ADD CONSTRAINT b_big CHECK (b > 10)")
    assert getattr(caught.value, "sqlstate", None) == "23514"
    assert '"b_big"' in str(caught.value)
    assert caught.value.diag.constraint_name == "b_big"  # type: ignore[attr-defined]
