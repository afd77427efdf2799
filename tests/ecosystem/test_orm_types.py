"""SQLAlchemy models with PostgreSQL's own types through postgresql+adaptive://, against
the same code on a plain database: an ``Enum`` (a type SQLAlchemy creates and drops
itself, checking first whether it exists), ``Uuid``, ``DateTime(timezone=True)``,
``LargeBinary``, ``JSONB``, ``ARRAY`` and ``Interval`` columns -- created twice with
``create_all`` (the second finds everything), written, read, filtered, ordered, reflected
and dropped."""

from __future__ import annotations

import datetime as dt
import enum
import uuid
from typing import Any

import sqlalchemy as sa
from sqlalchemy import orm
from sqlalchemy.dialects import postgresql as pg


class Mood(enum.Enum):
    sad = "sad"
    ok = "ok"
    happy = "happy"


def make_models() -> tuple[Any, Any]:
    class Base(orm.DeclarativeBase):
        pass

    class Entry(Base):
        __tablename__ = "entries"
        id: orm.Mapped[uuid.UUID] = orm.mapped_column(sa.Uuid, primary_key=True)
        mood: orm.Mapped[Mood] = orm.mapped_column(sa.Enum(Mood, name="mood"))
        at: orm.Mapped[dt.datetime] = orm.mapped_column(sa.DateTime(timezone=True))
        blob: orm.Mapped[bytes | None] = orm.mapped_column(sa.LargeBinary)
        doc: orm.Mapped[Any] = orm.mapped_column(pg.JSONB)
        tags: orm.Mapped[list[str]] = orm.mapped_column(pg.ARRAY(sa.Text))
        took: orm.Mapped[dt.timedelta | None] = orm.mapped_column(sa.Interval)

    return Base, Entry


ROWS = [
    dict(
        id=uuid.UUID(int=n + 1),
        mood=mood,
        at=dt.datetime(2024, 1 + n, 2, 3, 4, tzinfo=dt.UTC),
        blob=bytes([n]) * n,
        doc={"n": n, "tags": ["a"] * n},
        tags=["x", "y"][:n],
        took=dt.timedelta(hours=n),
    )
    for n, mood in enumerate([Mood.happy, Mood.sad, Mood.ok, Mood.happy])
]


def _run(engine: Any) -> dict[str, Any]:
    base, entry = make_models()
    base.metadata.create_all(engine)
    base.metadata.create_all(engine)  # (checks first: finds the type and the table)
    with orm.Session(engine) as session:
        session.add_all(entry(**r) for r in ROWS)
        session.commit()
        out: dict[str, Any] = {
            "all": [
                (e.id, e.mood, e.at, e.blob, e.doc, e.tags, e.took)
                for e in session.scalars(sa.select(entry).order_by(entry.id))
            ],
            "by mood": session.execute(
                sa.select(entry.mood, sa.func.count()).group_by(entry.mood).order_by(entry.mood)
            ).all(),
            "happy": session.scalars(
                sa.select(entry.id).where(entry.mood == Mood.happy).order_by(entry.id)
            ).all(),
            "after": session.scalars(
                sa.select(entry.id).where(entry.mood > Mood.sad).order_by(entry.id)
            ).all(),
        }
    inspector = sa.inspect(engine)
    out["enums"] = [(e["name"], e["labels"]) for e in inspector.get_enums()]  # type: ignore[attr-defined]
    out["columns"] = [(c["name"], str(c["type"])) for c in inspector.get_columns("entries")]
    base.metadata.drop_all(engine)
    out["after drop"] = sa.inspect(engine).get_enums()  # type: ignore[attr-defined]
    return out


def test_models_with_postgresql_types(engines: tuple[Any, Any]) -> None:
    plain, enc = engines
    expected, got = _run(plain), _run(enc)
    assert expected["all"] and expected["enums"] == [("mood", ["sad", "ok", "happy"])]
    for key in expected:
        assert got[key] == expected[key], key
