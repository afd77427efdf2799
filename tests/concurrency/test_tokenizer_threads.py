"""The client reads statements with sqlglot's tokenizer, whose instances keep the text
being read in their own fields: one instance shared by threads reads one thread's text
with another's position (a statement cut short: "syntax error at end of input").  Every
thread gets its own; here many threads split, check and parse different statements at
once, with the interpreter switching threads as often as it can, and each gets the
answer it gets alone."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator

import pytest

from adaptive_client.syntax import params, sqltext

STATEMENTS = [
    f"SELECT a{i}, 'it''s {i}' AS s{i}, b + {i} FROM t{i} WHERE c = %s AND d IN ({i}, {i + 1}); "
    f"UPDATE u{i} SET v = v * {i} WHERE w = %s"
    for i in range(8)
]


@pytest.fixture
def busy_switching() -> Iterator[None]:
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def _read(text: str) -> tuple[object, ...]:
    named, count, _ = params.normalize_placeholders(text)
    parts = sqltext.split_statements(named)
    return (
        named,
        count,
        parts,
        [sqltext.leading_words(p, 2) for p in parts],
        [s.sql("postgres") for p in parts for s in sqltext.parse(p)],
    )


def test_threads_read_statements_as_one_thread_does(busy_switching: None) -> None:
    alone = [_read(s) for s in STATEMENTS]
    wrong: list[tuple[int, object]] = []
    done = threading.Barrier(len(STATEMENTS))

    def reader(k: int) -> None:
        done.wait(timeout=30)
        for _ in range(60):
            try:
                got = _read(STATEMENTS[k])
            except Exception as exc:  # (a statement read cut short raises)
                wrong.append((k, exc))
                return
            if got != alone[k]:
                wrong.append((k, got))
                return

    threads = [threading.Thread(target=reader, args=(k,)) for k in range(len(STATEMENTS))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)  # (the watchdog: a hung reader fails the test)
    assert not any(t.is_alive() for t in threads)
    assert not wrong, wrong[:3]
