"""The application suite on databases whose collation is not C: an ICU ``en-US`` one and
a libc ``en_US.UTF-8`` one.  Every result, in order, must equal plain PostgreSQL's; the
only refusals accepted are the typed ones of what the client cannot do exactly under such
a database (case mapping under a ctype other than C) -- never a different answer.  (The
cases that are known gaps on a C database are left to test_app.py.)"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.keys import MasterKey

from .cases import ALL
from .harness import Case, Pair
from .schema import TABLES
from .test_app import _load

LOCALES = {
    "icu": "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'",
    "libc": "LC_COLLATE 'en_US.UTF-8' LC_CTYPE 'en_US.UTF-8'",
}


@pytest.fixture(scope="module", params=sorted(LOCALES))
def pair(request: Any, new_database: Any, master_key: MasterKey) -> Iterator[Pair]:
    locale = LOCALES[request.param]
    plain = psycopg.connect(new_database("appc_plain", locale=locale), autocommit=True)
    enc = adaptive_client.connect(
        new_database("appc_enc", locale=locale), master_key=master_key, autocommit=True
    )
    _load(plain)
    _load(enc)
    plain.autocommit = False
    enc.autocommit = False
    p = Pair(plain, enc, TABLES, refusals_ok=True)
    assert p.contents(enc) == p.contents(plain), "the loaded databases differ"
    yield p
    plain.rollback()
    enc.rollback()
    plain.close()
    enc.close()


# What the client may refuse on these databases: case mapping (lower, upper, ILIKE), which
# it evaluates exactly only under the C ctype.  Ordering is never refused.
_CASE_MAPPING = re.compile(r"\b(lower|upper|ilike)\b", re.IGNORECASE)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in ALL if not c.gap])
def test_case_under_collation(pair: Pair, case: Case) -> None:
    pair.refused.clear()
    pair.check(case)
    for sql in pair.refused:
        assert _CASE_MAPPING.search(sql), f"refused, though not case mapping: {sql}"
