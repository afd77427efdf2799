"""Master key loading, key wrapping, the key-check value, sealed metadata."""

from __future__ import annotations

from pathlib import Path

import pytest

from adaptive_client.catalog.keys import MasterKey, RootKeys, load_master_key
from adaptive_client.errors import (
    InvalidMasterKey,
    MasterKeyMissing,
    MetadataTampered,
    WrongMasterKey,
)


def test_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = MasterKey.generate()
    f = tmp_path / "key"
    f.write_text(key.hex() + "\n")
    monkeypatch.delenv("ADAPTIVE_MASTER_KEY", raising=False)
    monkeypatch.delenv("ADAPTIVE_MASTER_KEY_FILE", raising=False)
    assert load_master_key(key.hex()).hex() == key.hex()
    assert load_master_key(bytes.fromhex(key.hex())).hex() == key.hex()
    assert load_master_key(f).hex() == key.hex()
    assert load_master_key(str(f)).hex() == key.hex()
    with pytest.raises(MasterKeyMissing):
        load_master_key()
    monkeypatch.setenv("ADAPTIVE_MASTER_KEY_FILE", str(f))
    assert load_master_key().hex() == key.hex()
    monkeypatch.setenv("ADAPTIVE_MASTER_KEY", key.hex())
    assert load_master_key().hex() == key.hex()


@pytest.mark.parametrize("bad", ["00" * 31, "zz" * 32, b"short", "no/such/file"])
def test_invalid(bad: str | bytes) -> None:
    with pytest.raises(InvalidMasterKey):
        load_master_key(bad)


def test_key_is_never_shown() -> None:
    key = MasterKey.generate()
    assert key.hex() not in repr(key) and key.hex() not in str(key)
    assert "hidden" in repr(RootKeys(b"\x01" * 32))


def test_wrong_master_key_is_refused_by_kcv() -> None:
    a, b = MasterKey.generate(), MasterKey.generate()
    a.verify(a.key_check_value())
    with pytest.raises(WrongMasterKey):
        b.verify(a.key_check_value())


def test_wrapping_is_authenticated_and_bound_to_label() -> None:
    m = MasterKey.generate()
    w = m.wrap(b"k" * 32, "root")
    assert m.unwrap(w, "root") == b"k" * 32
    with pytest.raises(MetadataTampered):
        m.unwrap(w, "other")
    with pytest.raises(MetadataTampered):
        m.unwrap(w[:-1] + bytes([w[-1] ^ 1]), "root")
    with pytest.raises(MetadataTampered):
        m.unwrap(w[:10], "root")


def test_sealed_rows_detect_tampering_and_swaps() -> None:
    r = RootKeys(b"\x07" * 32)
    s = r.seal(b'{"a": 1}', b"table\x1ft_1\x1f1")
    assert r.open(s, b"table\x1ft_1\x1f1") == b'{"a": 1}'
    with pytest.raises(MetadataTampered):
        r.open(s, b"table\x1ft_2\x1f1")  # moved to another row
    with pytest.raises(MetadataTampered):
        r.open(s[:-1] + bytes([s[-1] ^ 1]), b"table\x1ft_1\x1f1")
    assert r.anonymize("table", "customer") == r.anonymize("table", "customer")
    assert "customer" not in r.anonymize("table", "customer")
