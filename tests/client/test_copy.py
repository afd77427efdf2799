"""COPY through the client: FROM STDIN (rows, text and CSV data) and TO STDOUT, against
plain PostgreSQL's COPY of the same rows."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.keys import MasterKey

DDL = (
    "CREATE TABLE item (id integer PRIMARY KEY, name text, price numeric(8,2), "
    "active boolean, made date, note varchar(10) DEFAULT 'none')"
)
ROWS: list[tuple[Any, ...]] = [
    (
        i,
        f"name {i}\twith tab\\" if i % 5 == 0 else f"n{i}",
        Decimal(i) / 4,
        i % 2 == 0,
        dt.date(2024, 1, 1 + i % 28),
    )
    for i in range(1, 2501)
] + [(9999, None, None, None, None)]


@pytest.fixture()
def pair(new_database: Any, master_key: MasterKey) -> Iterator[tuple[Any, Any]]:
    plain = psycopg.connect(new_database("copy_plain"), autocommit=True)
    enc = adaptive_client.connect(new_database("copy_enc"), master_key=master_key, autocommit=True)
    for c in (plain, enc):
        c.execute(DDL)
    yield plain, enc
    plain.close()
    enc.close()


def _all(conn: Any) -> list[tuple[Any, ...]]:
    return list(conn.execute("SELECT * FROM item ORDER BY id").fetchall())


def test_copy_rows_and_data_equal_plain(pair: tuple[Any, Any]) -> None:
    for c in pair:
        with c.cursor().copy("COPY item (id, name, price, active, made) FROM STDIN") as cp:
            for r in ROWS:  # more than one batch
                cp.write_row(r)
        with c.cursor().copy("COPY item (id, name, active) FROM STDIN") as cp:
            cp.write("10001\thello\\tworld\tt\n10002\t\\N\tf\n")
            cp.write(b"10003\tlast\\\\one\ttrue")  # the last line without its newline
        with c.cursor().copy(
            "COPY item (id, name, note) FROM STDIN WITH (FORMAT csv, HEADER)"
        ) as cp:
            cp.write('id,name,note\n20001,"a,b",\n20002,"",x\n20003,"say ""hi""",y\n')
    plain, enc = pair
    assert _all(enc) == _all(plain)
    assert len(_all(enc)) == len(ROWS) + 6


def test_copy_to_stdout_equals_plain(pair: tuple[Any, Any]) -> None:
    out = []
    for c in pair:
        with c.cursor().copy("COPY item (id, name, price, active, made) FROM STDIN") as cp:
            for r in ROWS[:50] + ROWS[-1:]:
                cp.write_row(r)
        chunks = []
        with c.cursor().copy(
            "COPY (SELECT id, name, price, active, made, note FROM item ORDER BY id) TO STDOUT"
        ) as cp:
            chunks += [bytes(d) for d in cp]
        with c.cursor().copy("COPY item (id, note) TO STDOUT WITH (FORMAT csv, HEADER true)") as cp:
            header, *lines = b"".join(bytes(d) for d in cp).splitlines(keepends=True)
            # a COPY of a table has no defined order (the peels' UPDATEs move rows): the
            # header first, then the rows in any order
            chunks += [header, *sorted(lines)]
        with c.cursor().copy("COPY item (id, name, price) TO STDOUT") as cp:
            text_rows = list(cp.rows())
        with c.cursor().copy("COPY item (id, made, active) TO STDOUT") as cp:
            cp.set_types(["integer", "date", "boolean"])
            typed_rows = list(cp.rows())
        out.append((b"".join(chunks), sorted(text_rows), sorted(typed_rows, key=repr)))
    assert out[0] == out[1]


def test_failed_copy_writes_nothing(pair: tuple[Any, Any]) -> None:
    for c in pair:
        with c.cursor().copy("COPY item (id, name) FROM STDIN") as cp:
            cp.write_row((1, "one"))
    plain, enc = pair
    for c, error in (
        (plain, psycopg.errors.UniqueViolation),
        (enc, psycopg.errors.UniqueViolation),
    ):
        with pytest.raises(error), c.cursor().copy("COPY item (id, name) FROM STDIN") as cp:
            cp.write_row((2, "two"))
            cp.write_row((1, "again"))
    with (
        pytest.raises(adaptive_client.errors.EncodingError),
        enc.cursor().copy("COPY item (id, price) FROM STDIN") as cp,
    ):
        cp.write_row((3, "not a number"))
    assert _all(enc) == _all(plain) == [(1, "one", None, None, None, "none")]


def test_copy_errors_and_execute_as_psycopg(new_database: Any, master_key: MasterKey) -> None:
    """A key the server refuses during a COPY is named as the application named it
    (the constraint's name, not the stored index's), and ``execute("COPY ...")`` is
    psycopg's ProgrammingError, raised before anything is sent (the transaction goes
    on)."""
    plain = psycopg.connect(new_database("copyerr_plain"))
    enc = adaptive_client.connect(new_database("copyerr_enc"), master_key=master_key)
    for conn in (plain, enc):
        conn.execute("CREATE TABLE cp (id integer PRIMARY KEY, name text)")
        conn.execute("INSERT INTO cp VALUES (1, 'a')")
        conn.commit()
    messages = []
    for conn in (plain, enc):
        with (
            pytest.raises(psycopg.errors.UniqueViolation) as refused,
            conn.cursor().copy("COPY cp (id, name) FROM STDIN") as copy,
        ):
            copy.write_row((1, "dup"))
        messages.append(str(refused.value).splitlines()[0])
        conn.rollback()
    assert (
        messages[0] == messages[1] == ('duplicate key value violates unique constraint "cp_pkey"')
    )
    with pytest.raises(psycopg.ProgrammingError, match="use copy"):
        enc.execute("COPY cp TO STDOUT")
    assert enc.execute("SELECT name FROM cp").fetchall() == [("a",)]
    plain.close()
    enc.close()
