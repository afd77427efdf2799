"""HOM (Paillier, g = n + 1): known answers, sums, serialization, malformed input."""

from __future__ import annotations

import math
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adaptive_client.errors import (
    CiphertextError,
    ConfigError,
    EncodingError,
    KeyError_,
    ValueOutOfDomain,
)
from adaptive_client.schemes import HOM

# A 2048-bit known answer: fixed primes, r = 3**1200, m = -123456789.
P2048 = int(
    "ee6e47a0845a0cae3773f44936913acf45f62f60ae687e80caf47d21f477aaecbee8f0309e981c73"
    "ba3469ae9e843da2279b5c2916c7bd78cfae8b1597612a21078c254823de2e0b78a0207092a5cd9e"
    "a1a3b7653b76dca228bd7054754a13aa27534ab81cd33853e0e89ec96668ddc501210aca1eefb2a7"
    "2ce7039e32007d09",
    16,
)
Q2048 = int(
    "fd8f697a1d0b5ea2335985e07345c1fb15ecfb029f3e2bd9adc0d7cb16d23561085c05e846227192"
    "5574122257c9c75eded70911487b7112e65d306c9a47000775c9c6a248cf0b32d5c77d3f3aa1fa9d"
    "1bb36cd825ce6ec38e8e862ec001c2dbad8aaae0b2061f3d1859d1a4c4b2ac719778c5ee625ac99a"
    "d762756c5af90f4b",
    16,
)
C2048 = int(
    "d20841c643c5e94b7fbb14190bf684031118cd4d995a346863d5bd2fe7748c2dc10424ef10e906c8"
    "a6a49464cb5603064a5693b7e32a96b3788819cf65efc47f901eee59454efbfc7116cd91f8537b86"
    "05335ea9d646d0947e9b41ead6cb44e56da0c9576338b2e8cee06234533319316f93efdc1c5377ef"
    "022a57f8548208d4dd6e11f8b630574ef63d4072a5145824bfd502196090aa133ce2b48ca65ac67f"
    "489603e1fcb0eae04e78afa6febe80440cf4a6bf52d52ec5446a6b34837d55fa973f0f1f56a2a937"
    "fca6082e4d01b480510759a24dbc32debc18c7361637241f1c059415d5c853afebdbe8f358f17b57"
    "bafb2dc9164a67ab80e08ef8f96e07f74b03e36a06388219d5c211b760b80b7c67c3cb963095c4f0"
    "641e218830f1f064070d2c98fcf383c79ab149fa1e1bb83b5928d209b4384ebaf09b7416ab73cd3c"
    "92edc2d1b33d82ff17c3d18c63e7b2446d01a2dad2dd0c36a0fd9bdad4dbd147e29af87bd5d079ea"
    "950cd5e81814a6a17f2951304101f183287b96a590dc0a7348e00a1a814c093ddf6d95d6dbee857f"
    "eb9faecad3d1fee5968f9ed5c8afd09cadda4274bf6fdb1436f368a50b1c12fe91a57d9e34acdc05"
    "018d0b6f2c9655809fa92194c8d0ca1224f8a0def760ac63bae9d3d9273a712959bfdcd1f749da02"
    "41ee7c7d1929fc38f77be78bee6dd1a2bde78a64126489a04bbc432bad5ba390",
    16,
)

P_SMALL, Q_SMALL = 1000000007, 998244353  # readable small known primes


def _textbook(n: int, m: int, r: int) -> int:
    """Paillier encryption straight from the definition (no CRT, no gmpy2)."""
    n2 = n * n
    return pow(n + 1, m % n, n2) * pow(r, n, n2) % n2


@pytest.fixture(scope="module")
def hom512() -> HOM:
    return HOM.generate(512)


def test_known_answer_2048() -> None:
    h = HOM(P2048, Q2048)
    assert h.n.bit_length() == 2048 and h.n2 == h.n**2
    assert h.encrypt(-123456789, r=3**1200) == C2048
    assert _textbook(P2048 * Q2048, -123456789, 3**1200) == C2048
    assert h.decrypt(C2048) == -123456789
    assert h.decrypt(h.add_plain(C2048, 123456790)) == 1


def test_known_answer_small() -> None:
    h = HOM(P_SMALL, Q_SMALL)
    n = P_SMALL * Q_SMALL
    assert h.encrypt(42, r=12345) == _textbook(n, 42, 12345) == 534416039743498461484261330040392179
    assert h.decrypt(534416039743498461484261330040392179) == 42
    assert h.decrypt(h.encrypt(-7, r=999)) == -7
    assert h.decrypt(h.encrypt(n // 2, r=5)) == n // 2  # the top of (-n/2, n/2]
    assert h.decrypt(h.encrypt(-(n // 2) + 1, r=5)) == -(n // 2) + 1


@settings(max_examples=40)
@given(a=st.integers(-(2**200), 2**200), b=st.integers(-(2**200), 2**200))
def test_sums(hom512: HOM, a: int, b: int) -> None:
    h = hom512
    ca, cb = h.encrypt(a), h.encrypt(b)
    assert h.decrypt(ca) == a
    assert h.decrypt(h.add(ca, cb)) == a + b
    assert h.decrypt(h.add_plain(ca, b)) == a + b


@settings(max_examples=10)
@given(st.lists(st.integers(-(10**12), 10**12), min_size=1, max_size=30))
def test_column_sum_by_product(hom512: HOM, values: list[int]) -> None:
    """What the server does for SUM: multiply every ciphertext modulo n²."""
    h = hom512
    product = 1
    for c in (h.encrypt(v) for v in values):
        product = product * c % h.n2
    assert h.decrypt(product) == sum(values)


@given(st.integers(-(2**64), 2**64))
def test_randomized_and_textbook(hom512: HOM, m: int) -> None:
    h = hom512
    assert h.encrypt(m) != h.encrypt(m)
    assert h.encrypt(m, r=7) == _textbook(h.n, m, 7)


def test_serialization() -> None:
    h = HOM(P2048, Q2048)
    again = HOM.from_bytes(h.to_bytes())
    assert again.n == h.n and again.decrypt(C2048) == -123456789
    assert HOM.from_bytes(bytearray(h.to_bytes())).n == h.n
    for bad in (b"", b"{}", b"not json", b'{"p": "7", "q": 11}', b'{"p": 15, "q": 11}'):
        with pytest.raises(KeyError_):
            HOM.from_bytes(bad)
    assert str(P2048)[:20] not in repr(h)


def test_generate_2048() -> None:
    h = HOM.generate()
    assert h.n.bit_length() == 2048
    assert HOM.from_bytes(h.to_bytes()).decrypt(h.encrypt(123456789)) == 123456789
    with pytest.raises(ConfigError):
        HOM.generate(63)


def test_malformed_ciphertexts(hom512: HOM) -> None:
    h = hom512
    p = int(h.to_bytes().split(b'"p": ')[1].split(b",")[0])
    for bad in (0, -1, h.n2, h.n2 + 5, h.n, p, 3 * h.n):
        assert bad <= 0 or bad >= h.n2 or math.gcd(bad, h.n) != 1
        with pytest.raises(CiphertextError):
            h.decrypt(bad)
        with pytest.raises(CiphertextError):
            h.add(h.encrypt(1), bad)
    with pytest.raises(CiphertextError):
        h.decrypt("12")  # type: ignore[arg-type]


def test_plaintext_domain(hom512: HOM) -> None:
    h = hom512
    for bad in (h.n // 2 + 1, -(h.n // 2), h.n, 2**600):
        with pytest.raises(ValueOutOfDomain):
            h.encrypt(bad)
    with pytest.raises(EncodingError):
        h.encrypt(1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        h.encrypt(1, r=h.n)


def test_parameters() -> None:
    assert (HOM.name, HOM.tag, HOM.strength) == ("HOM", 0, 2)
    assert HOM.operators == {"SUM", "AVG", "+"}
    with pytest.raises(KeyError_):
        HOM(7, 7)
    with pytest.raises(KeyError_):
        HOM(7, 15)


def test_precomputed_nonces_are_fresh_and_valid(hom512: HOM) -> None:
    # more encryptions than the pool holds: pooled and inline nonces alike
    cts = [hom512.encrypt(42) for _ in range(200)]
    assert len(set(cts)) == len(cts)  # no nonce used twice
    assert all(hom512.decrypt(c) == 42 for c in cts)
    pool = hom512._pool
    assert pool is not None
    for _ in range(500):  # the background thread refills it
        if len(pool._values) >= 32:
            break
        time.sleep(0.01)
    assert len(pool._values) >= 32


def test_the_refill_leaves_the_gil_to_the_application() -> None:
    """The refill thread's powmods release the GIL: the application's thread, coming back
    from a wait (here a 0.5 ms sleep standing for the network), is not stalled behind a
    whole 2048-bit r^n (several ms each, when the GIL is kept)."""
    h = HOM(P2048, Q2048)
    h.encrypt(1)  # starts the pool's thread, which now fills 64 values (~0.5 s of powmods)
    waits = []
    for _ in range(60):
        t0 = time.perf_counter()
        time.sleep(0.0005)
        waits.append(time.perf_counter() - t0)
    assert h._pool is not None and len(h._pool._values) < 64  # measured while it filled
    assert sorted(waits)[30] < 0.003, sorted(waits)[30]
