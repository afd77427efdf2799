"""SQLAlchemy Core through postgresql+adaptive://, against the same code on plain
PostgreSQL through SQLAlchemy's psycopg dialect: CRUD, RETURNING, insertmanyvalues
batches, server-side cursors, reflection from the sealed catalog, create_all/drop_all."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import psycopg
import pytest
import sqlalchemy as sa

from adaptive_client.dbapi.cursor import NamedCursor


def _schema() -> tuple[sa.MetaData, sa.Table, sa.Table]:
    md = sa.MetaData()
    item = sa.Table(
        "item",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("name", sa.String(40), nullable=False),
        sa.Column("qty", sa.Integer),
        sa.Column("price", sa.Numeric(10, 2)),
        sa.Column("created", sa.DateTime),
        sa.Column("day", sa.Date),
        sa.Column("active", sa.Boolean),
        sa.Column("note", sa.Text),
        sa.Column("code", sa.String(12), unique=True),
        sa.Index("ix_item_qty", "qty"),
    )
    tag = sa.Table(
        "tag",
        md,
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("label", sa.String(20), nullable=False),
        sa.Column("weight", sa.Float),
        sa.Column("small", sa.SmallInteger),
    )
    return md, item, tag


def _rows(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": i,
            "name": f"item {i % 7}",
            "qty": (i * 37) % 50 if i % 9 else None,
            "price": Decimal(i * 125) / 100,
            "created": dt.datetime(2024, 1, 1) + dt.timedelta(hours=13 * i),
            "day": dt.date(2024, 1, 1) + dt.timedelta(days=i % 40),
            "active": i % 3 == 0,
            "note": None if i % 4 else f"note {i}",
            "code": f"c{i:04d}",
        }
        for i in range(1, n + 1)
    ]


def both(engines: tuple[Any, Any], fn: Callable[[sa.Connection], Any]) -> Any:
    """Run ``fn`` in a transaction on each engine; the results must be equal."""
    out = []
    for eng in engines:
        with eng.begin() as conn:
            out.append(fn(conn))
    assert out[0] == out[1]
    return out[1]


def test_crud_and_returning_equal_plain(engines: tuple[Any, Any]) -> None:
    md, item, _ = _schema()
    for eng in engines:
        md.create_all(eng)
    rows = _rows(60)
    both(engines, lambda c: c.execute(item.insert(), rows[:50]) and None)
    # multi-row INSERT ... RETURNING ("insertmanyvalues")
    got = both(
        engines,
        lambda c: c.execute(item.insert().returning(item.c.id, item.c.name), rows[50:]).all(),
    )
    assert [r.id for r in got] == [r["id"] for r in rows[50:]]
    queries: list[sa.Select[Any]] = [
        sa.select(item).order_by(item.c.id),
        sa.select(item.c.id).where(item.c.name == "item 3").order_by(item.c.id),
        sa.select(item.c.id, item.c.qty)
        .where(item.c.qty > 20)
        .order_by(item.c.qty.desc(), item.c.id),
        sa.select(item.c.id)
        .where(item.c.price.between(Decimal("3.5"), Decimal("20")))
        .order_by(item.c.id),
        sa.select(item.c.id).where(item.c.qty.is_(None)).order_by(item.c.id),
        sa.select(item.c.id).where(item.c.qty.in_([0, 11, 24, 35])).order_by(item.c.id),
        sa.select(item.c.id).where(item.c.active.is_(True)).order_by(item.c.id),
        sa.select(item.c.id).where(item.c.day >= dt.date(2024, 1, 20)).order_by(item.c.id),
        sa.select(item.c.id).order_by(item.c.created.desc()).limit(5).offset(3),
        sa.select(item.c.name, sa.func.count(), sa.func.sum(item.c.qty), sa.func.max(item.c.price))
        .group_by(item.c.name)
        .order_by(item.c.name),
        sa.select(sa.func.count(item.c.note), sa.func.min(item.c.created), sa.func.avg(item.c.qty)),
        sa.select(item.c.code).where(item.c.code == sa.bindparam("code")).params(code="c0042"),
    ]
    for q in queries:
        both(engines, lambda c, q=q: c.execute(q).all())
    both(
        engines,
        lambda c: sorted(
            c.execute(
                item.update()
                .where(item.c.id < 5)
                .values(name="renamed")
                .returning(item.c.id, item.c.name)
            ).all()
        ),
    )
    both(
        engines,
        lambda c: (
            c.execute(item.update().where(item.c.qty == 11).values(qty=item.c.qty + 1)).rowcount
        ),
    )
    both(
        engines,
        lambda c: sorted(
            c.execute(item.delete().where(item.c.active.is_(False)).returning(item.c.id)).all()
        ),
    )
    both(engines, lambda c: c.execute(sa.select(item).order_by(item.c.id)).all())


def test_insertmanyvalues_batches(engines: tuple[Any, Any]) -> None:
    """executemany with RETURNING goes as multi-row INSERTs, as on psycopg, in order."""
    md, item, _ = _schema()
    seen: list[list[str]] = [[], []]
    for i, eng in enumerate(engines):
        md.create_all(eng)
        sa.event.listen(
            eng, "before_cursor_execute", lambda *a, i=i, **k: seen[i].append(a[2]), named=False
        )
    rows = _rows(700)
    got = both(
        engines,
        lambda c: c.execute(
            item.insert().returning(item.c.id, item.c.code, sort_by_parameter_order=True), rows
        ).all(),
    )
    assert [r.id for r in got] == list(range(1, 701))
    inserts = [s for s in seen[1] if s.startswith("INSERT")]
    assert len(inserts) == len([s for s in seen[0] if s.startswith("INSERT")])
    assert len(inserts) < 10  # batched, not one statement a row


def test_server_side_cursor_streams(engines: tuple[Any, Any]) -> None:
    md, item, _ = _schema()
    for eng in engines:
        md.create_all(eng)
    both(engines, lambda c: c.execute(item.insert(), _rows(300)) and None)
    kinds = []

    def stream(c: sa.Connection) -> list[Any]:
        res = c.execution_options(yield_per=25).execute(
            sa.select(item.c.id, item.c.name, item.c.price).where(item.c.qty > 10)
        )
        kinds.append(type(res.cursor))
        return sorted(tuple(r) for part in res.partitions() for r in part)

    got = both(engines, stream)
    assert len(got) > 100
    assert kinds[1] is NamedCursor


def _reflected(eng: sa.Engine) -> dict[str, Any]:
    insp = sa.inspect(eng)
    out: dict[str, Any] = {"tables": insp.get_table_names()}
    for t in out["tables"]:
        out[t] = {
            "columns": [(c["name"], str(c["type"]), c["nullable"]) for c in insp.get_columns(t)],
            "pk": insp.get_pk_constraint(t)["constrained_columns"],
            "indexes": sorted(
                (i["name"], tuple(i["column_names"]), bool(i["unique"]))
                for i in insp.get_indexes(t)
                if not i.get("duplicates_constraint")
            ),
            "uniques": sorted(tuple(u["column_names"]) for u in insp.get_unique_constraints(t)),
        }
    return out


def test_reflection_sees_plain_names_and_types(
    engines: tuple[Any, Any], dsn_pair: tuple[str, str]
) -> None:
    md, _, _ = _schema()
    for eng in engines:
        md.create_all(eng)
    plain, enc = (_reflected(e) for e in engines)
    assert enc == plain
    assert enc["tables"] == ["item", "tag"]
    # MetaData.reflect builds the same tables
    for eng in engines:
        md2 = sa.MetaData()
        md2.reflect(eng)
        assert sorted(md2.tables) == ["item", "tag"]
        assert [c.name for c in md2.tables["item"].c] == [c.name for c in md.tables["item"].c]
        assert isinstance(md2.tables["item"].c.price.type, sa.Numeric)
        assert md2.tables["item"].c.price.type.precision == 10
    # the server itself holds none of these names
    with psycopg.connect(dsn_pair[1]) as raw:
        names = {r[0] for r in raw.execute("SELECT relname FROM pg_class").fetchall()}
        cols = {
            r[0]
            for r in raw.execute(
                "SELECT attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
                "WHERE c.relnamespace = 'public'::regnamespace"
            ).fetchall()
        }
        assert len(cols) > 10
    assert not {"item", "tag"} & names
    assert not {"qty", "price", "label", "code"} & cols


def test_create_all_drop_all_and_has_table(engines: tuple[Any, Any]) -> None:
    md, _, tag = _schema()
    for eng in engines:
        md.create_all(eng)
        md.create_all(eng)  # checkfirst: nothing to do the second time
        insp = sa.inspect(eng)
        assert insp.has_table("item") and insp.has_table("tag")
        assert not insp.has_table("nope")
        md.drop_all(eng, tables=[tag])
        assert sa.inspect(eng).get_table_names() == ["item"]
        md.drop_all(eng)
        assert sa.inspect(eng).get_table_names() == []


def test_errors_are_sqlalchemy_errors(engines: tuple[Any, Any]) -> None:
    md, item, _ = _schema()
    for eng in engines:
        md.create_all(eng)
        with eng.begin() as c:
            c.execute(item.insert(), _rows(3))
        with pytest.raises(sa.exc.IntegrityError), eng.begin() as c:
            c.execute(item.insert(), _rows(1))
        with pytest.raises(sa.exc.ProgrammingError), eng.begin() as c:
            c.execute(sa.text("SELECT nope FROM item"))
        with eng.connect() as c:  # the connection is usable after the errors
            assert c.execute(sa.select(sa.func.count()).select_from(item)).scalar() == 3


def test_isolation_levels_and_text(engines: tuple[Any, Any]) -> None:
    md, item, _ = _schema()
    for eng in engines:
        md.create_all(eng)
    both(engines, lambda c: c.execute(item.insert(), _rows(10)) and None)
    for level in ("REPEATABLE READ", "SERIALIZABLE", "AUTOCOMMIT", "READ COMMITTED"):
        for eng in engines:
            with eng.connect().execution_options(isolation_level=level) as c:
                # AUTOCOMMIT is a driver setting: the session's level stays the default
                actual = "READ COMMITTED" if level == "AUTOCOMMIT" else level
                assert c.get_isolation_level() == actual
                rows = c.execute(
                    sa.text("SELECT id, name FROM item WHERE id <= :n ORDER BY id"), {"n": 3}
                ).all()
                assert [r.id for r in rows] == [1, 2, 3]
    assert enc_default_level(engines[1]) == engines[0].dialect.default_isolation_level


def enc_default_level(eng: sa.Engine) -> str | None:
    with eng.connect():
        return eng.dialect.default_isolation_level


def test_boolean_is_true_false_equal_plain(engines: tuple[Any, Any]) -> None:
    """SQLAlchemy writes ``col.is_(True)`` as ``col IS true``: over the Eq onion,
    (col = true) IS TRUE -- false on NULL, as PostgreSQL's IS TRUE."""
    md, item, _ = _schema()
    for eng in engines:
        md.create_all(eng)
    rows = _rows(12)
    for r in rows[::4]:
        r["active"] = None
    both(engines, lambda c: c.execute(item.insert(), rows) and None)
    for cond in (
        item.c.active.is_(True),
        item.c.active.is_(False),
        item.c.active.is_not(True),
        item.c.active.is_not(False),
        sa.not_(item.c.active.is_(True)),
    ):
        got = both(
            engines,
            lambda c, w=cond: c.execute(sa.select(item.c.id).where(w).order_by(item.c.id)).all(),
        )
        assert got
    both(
        engines,
        lambda c: sorted(
            c.execute(item.delete().where(item.c.active.is_not(True)).returning(item.c.id)).all()
        ),
    )


def test_percent_signs_as_psycopg_reads_them(dsn_pair: tuple[str, str], master_key: Any) -> None:
    """With parameters (SQLAlchemy always passes some), psycopg reads ``%%`` as ``%`` in
    string literals and quoted names too; without, it sends the text untouched."""
    import adaptive_client

    plain = psycopg.connect(dsn_pair[0], autocommit=True)
    enc = adaptive_client.connect(dsn_pair[1], master_key=master_key, autocommit=True)
    out = []
    for c in (plain, enc):
        c.execute('CREATE TABLE "per %% cent" (id integer PRIMARY KEY, "col%%p" varchar(20))', {})
        c.execute(
            'INSERT INTO "per %% cent" VALUES (1, %s), (2, %s), (3, %s)', ("a % b", "a %% b", "x")
        )
        out.append(
            [
                c.execute(
                    'SELECT id FROM "per %% cent" WHERE "col%%p" = \'a %% b\'', {}
                ).fetchall(),
                c.execute(
                    'SELECT id FROM "per %% cent" WHERE "col%%p" = \'a %% b\' AND id > %s', (0,)
                ).fetchall(),
                c.execute('SELECT id FROM "per % cent" WHERE "col%p" = \'a %% b\'').fetchall(),
                c.execute('SELECT id FROM "per % cent" WHERE "col%p" = \'a % b\'').fetchall(),
            ]
        )
    plain.close()
    enc.close()
    assert out[0] == out[1] == [[(1,)], [(1,)], [(2,)], [(1,)]]


def test_pool_pre_ping_replaces_a_dead_connection(dsn_pair: tuple[str, str], key_file: Any) -> None:
    """pool_pre_ping: the ping opens no transaction, and a connection whose server
    session died is replaced before the application sees it."""
    from .conftest import sa_url

    md, item, _ = _schema()
    eng = sa.create_engine(
        sa_url(dsn_pair[1], "adaptive", master_key_file=str(key_file)),
        pool_pre_ping=True,
        pool_size=1,
    )
    md.create_all(eng)
    with eng.begin() as c:
        c.execute(item.insert(), _rows(3))
    with eng.connect() as c:
        raw = c.connection.dbapi_connection
        assert raw is not None
        assert raw.pg.info.transaction_status == psycopg.pq.TransactionStatus.IDLE  # type: ignore[attr-defined]
        pid = raw.pg.info.backend_pid  # type: ignore[attr-defined]
    with psycopg.connect(dsn_pair[1], autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    with eng.connect() as c:
        assert c.execute(sa.select(sa.func.count()).select_from(item)).scalar() == 3
        assert c.connection.dbapi_connection.pg.info.backend_pid != pid  # type: ignore[union-attr]
    eng.dispose()


def test_contains_startswith_endswith_equal_plain(engines: tuple[Any, Any]) -> None:
    """SQLAlchemy's contains()/startswith()/endswith() send LIKE '%%' || %(p)s || '%%':
    answered by split execution, as on plain PostgreSQL."""
    md, item, _ = _schema()
    for eng in engines:
        md.create_all(eng)
    both(engines, lambda c: c.execute(item.insert(), _rows(40)) and None)
    for cond in (
        item.c.name.contains("em 3"),
        item.c.name.startswith("item"),
        item.c.name.endswith(" 5"),
        item.c.code.contains("%", autoescape=True),
        sa.not_(item.c.name.endswith("1")),
    ):
        both(
            engines,
            lambda c, w=cond: c.execute(sa.select(item.c.id).where(w).order_by(item.c.id)).all(),
        )


def test_view_reflection_equals_plain(engines: tuple[Any, Any]) -> None:
    md, _, _ = _schema()
    for eng in engines:
        md.create_all(eng)
        with eng.begin() as c:
            c.execute(
                sa.text(
                    "CREATE VIEW item_v AS SELECT i.id AS item_id, i.name, price, i.qty + 1 AS next_qty FROM item i"
                )
            )
            c.execute(sa.text("CREATE VIEW tag_v AS SELECT * FROM tag"))
    got = []
    for eng in engines:
        insp = sa.inspect(eng)
        got.append(
            (
                insp.get_view_names(),
                {
                    v: [(c["name"], str(c["type"]), c["nullable"]) for c in insp.get_columns(v)]
                    for v in ("item_v", "tag_v")
                },
            )
        )
    # a computed output's type is PostgreSQL's to infer: compared by name only
    plain, enc = got
    assert enc[0] == plain[0] == ["item_v", "tag_v"]
    assert enc[1]["tag_v"] == plain[1]["tag_v"]
    assert enc[1]["item_v"][:3] == plain[1]["item_v"][:3]
    assert enc[1]["item_v"][3][0] == plain[1]["item_v"][3][0] == "next_qty"
