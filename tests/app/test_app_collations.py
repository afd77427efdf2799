"""The application suite on databases whose collation is not C: an ICU ``en-US`` one and
a libc ``en_US.UTF-8`` one.  Every result, in order (text ordered by the collation, case
mapped by the database's ctype), must equal plain PostgreSQL's: no case the C database
answers is refused here.  (The cases that are known gaps on a C database are left to
test_app.py.)"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.keys import MasterKey

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
    p = Pair(plain, enc, TABLES)
    assert p.contents(enc) == p.contents(plain), "the loaded databases differ"
    yield p
    plain.rollback()
    enc.rollback()
    plain.close()
    enc.close()


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in ALL if not c.gap])
def test_case_under_collation(pair: Pair, case: Case) -> None:
    pair.check(case)
