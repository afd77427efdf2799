"""inet, cidr, macaddr and macaddr8 columns created, written, read back, ordered, grouped
and compared as in a plain database, on a C and an ICU database: every input literal of
PostgreSQL's regression tests for these types (good and bad, with their SQLSTATEs), as
literals and as parameters, Python ``ipaddress`` values as psycopg sends them; COPY TO
prints them as PostgreSQL does; ``adaptive-db layers`` shows the columns."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from type_pairs import Pair, check

import adaptive_client
from adaptive_client.admin import controls as admin
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.values.network_encodings import ipv6_text

# inet.sql's inet inputs (regression tests of PostgreSQL 15 and later)
INET_REGRESSION = [
    "192.168.1.226/24", "192.168.1.226", "192.168.1.0/24", "192.168.1.0/25",
    "192.168.1.255/24", "192.168.1.255/25", "10.1.2.3/8", "10.1.2.3/32", "10.1.2.3/24",
    "10.1.2.3/16", "11.1.2.3/8", "9.1.2.3/8", "10:23::f1/64", "10:23::ffff", "::4.3.2.1/24",
    "::1.2.3.4", "10::/8", "::192.168.1.226", "127.0.0.1", "127::1", "127.0.0.2", "127::2",
    "126::1", "126::2", "0.0.0.0/0", "0.0.0.0/1", "0.0.0.0/32", "0.0.0.1/0", "0.0.0.1/1",
    "127.126.127.127/0", "127.127.127.127/0", "127.128.127.127/0", "192.168.1.1/23",
    "192.168.1.1/5", "192.168.1.1/6", "192.168.1.1/25", "192.168.1.2/25", "192.168.1.1/26",
    "192.168.1.2/26", "192.168.1.2/23", "192.168.1.255/5", "192.168.1.255/6",
    "192.168.1.3/1", "192.168.1.3/23", "192.168.1.4/0", "192.168.1.5/0", "255.0.0.0/0",
    "255.1.0.0/0", "255.2.0.0/0", "255.255.000.000/0", "255.255.000.000/15",
    "255.255.000.000/16", "255.255.255.254/32", "255.255.255.000/32", "255.255.255.001/31",
    "255.255.255.002/31", "255.255.255.003/31", "255.255.255.003/32", "255.255.255.001/32",
    "255.255.255.255/0", "255.255.255.255/1", "255.255.255.255/16", "255.255.255.255/31",
    "255.255.255.255/32", "255.255.255.253/32", "255.255.255.252/32", "255.3.0.0/0",
    "0000:0000:0000:0000:0000:0000:0000:0000/0", "0000:0000:0000:0000:0000:0000:0000:0000/128",
    "0000:0000:0000:0000:0000:0000:0000:0001/128", "10:23::f1/65",
    "8000:0000:0000:0000:0000:0000:0000:0000/1", "::1:ffff:ffff:ffff:ffff/128",
    "::2:ffff:ffff:ffff:ffff/128", "::4:3:2:0/24", "::4:3:2:1/24", "::4:3:2:2/24",
    "ffff:83e7:f118:57dc:6093:6d92:689d:58cf/70", "ffff:84b0:4775:536e:c3ed:7116:a6d6:34f0/44",
    "ffff:8566:f84:5867:47f1:7867:d2ba:8a1a/69", "ffff:8883:f028:7d2:4d68:d510:7d6b:ac43/73",
    "ffff:8ae8:7c14:65b3:196:8e4a:89ae:fb30/89", "ffff:8dd0:646:694c:7c16:7e35:6a26:171/104",
    "ffff:8eef:cbf:700:eda3:ae32:f4b4:318b/121", "ffff:90e7:e744:664:a93:8efe:1f25:7663/122",
    "ffff:9597:c69c:8b24:57a:8639:ec78:6026/111", "ffff:9e86:79ea:f16e:df31:8e4d:7783:532e/88",
    "ffff:a0c7:82d3:24de:f762:6e1f:316d:3fb2/23", "ffff:fffa:ffff:ffff:ffff:ffff:ffff:ffff/0",
    "ffff:fffb:ffff:ffff:ffff:ffff:ffff:ffff/0", "ffff:fffc:ffff:ffff:ffff:ffff:ffff:ffff/0",
    "ffff:fffd:ffff:ffff:ffff:ffff:ffff:ffff/0", "ffff:fffe:ffff:ffff:ffff:ffff:ffff:ffff/0",
    "ffff:ffff:ffff:fffa:ffff:ffff:ffff:ffff/0", "ffff:ffff:ffff:fffb:ffff:ffff:ffff:ffff/0",
    "ffff:ffff:ffff:fffc:ffff:ffff:ffff:ffff/0", "ffff:ffff:ffff:fffd::/128",
    "ffff:ffff:ffff:fffd:ffff:ffff:ffff:ffff/0", "ffff:ffff:ffff:fffe::/128",
    "ffff:ffff:ffff:fffe:ffff:ffff:ffff:ffff/0", "ffff:ffff:ffff:ffff:4:3:2:0/24",
    "ffff:ffff:ffff:ffff:4:3:2:1/24", "ffff:ffff:ffff:ffff:4:3:2:2/24",
    "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/0", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128",
    "1234",
]  # fmt: skip
# inet.sql's cidr inputs
CIDR_REGRESSION = [
    "192.168.1", "192.168.1.0/26", "10", "10.0.0.0", "10.1.2.3", "10.1.2", "10.1",
    "10:23::f1", "10:23::8000/113", "::ffff:1.2.3.4", "192.168.1.2/30", "1234::1234::1234",
    "ffff:ffff:ffff:ffff::/24", "192.168.1.0/24", "1234", "192.168.198.200/24",
]  # fmt: skip
# the corners of inet_net_pton beyond those: abbreviations, classes, hex, masks, spaces
EDGES = [
    "1.2.3.4.", "1.2.3.4.5", "1.2.3", "1.2.3/24", "1.2.3/25", "10/8", "10/7", "10/33",
    "1.2.3.4/", "1.2.3.4/0", "1.2.3.256", " 1.2.3.4", "1.2.3.4 ", "", "/8", "1..2.3",
    "224", "224.1", "240", "128", "192", "0x0a", "0x0a/8", "0xa1b2c3d4", "0x", "::",
    "::/0", "::1", "1::", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7::",
    "::ffff:1.2.3.4/96", "::1.2.3", "::1.2.3.4.5", "::01.2.3.4", "::1:2", "12345::",
    "::1/129", "::1/01", "::1/", ":1", "1:", "1:::2", "fe80::1%eth0", "1.2.3.4/32/1",
    "::ffff:0:0", "0:0:0:0:0:ffff:102:304", "1:0:0:2::3", "1:0:0:2:0:0:0:3", "::2:3:4:5:6:7",
    "A:B::C", "1.2.3.4/08", "00000000001.2.3.4",
]  # fmt: skip
PYTHON_VALUES: list[Any] = [
    ipaddress.ip_address("192.168.1.5"), ipaddress.ip_interface("192.168.1.5/24"),
    ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_address("::1"),
    ipaddress.ip_interface("2001:db8::7/64"), ipaddress.ip_network("2001:db8::/32"),
]  # fmt: skip


@pytest.mark.parametrize("sql_type", ["inet", "cidr"])
def test_network_parameters(pair: Pair, sql_type: str) -> None:
    """Every input as a parameter (a str is sent untyped: the input function reads it),
    and ipaddress values as psycopg sends them (an inet into a cidr loses its host bits);
    ordered by network_cmp: family, network, mask, address."""
    values = INET_REGRESSION + CIDR_REGRESSION + EDGES + PYTHON_VALUES
    probes = ["192.168.1.0/24", "10", "::4.3.2.1/24", "ffff:ffff:ffff:fffe::/128", "127::1"]
    check(pair, sql_type, values, probes=[*probes, *PYTHON_VALUES[:3]])


@pytest.mark.parametrize("sql_type", ["inet", "cidr"])
def test_network_literals(pair: Pair, sql_type: str) -> None:
    values = CIDR_REGRESSION + EDGES + INET_REGRESSION[:40]
    check(pair, sql_type, values, as_literals=True)


def test_invalid_cidr_detail(pair: Pair) -> None:
    """Bits right of the mask: 22P02 with PostgreSQL's message and DETAIL."""
    pair.both("CREATE TABLE net_detail (c cidr)")
    reports = []
    for conn in (pair.plain, pair.enc):
        with pytest.raises(psycopg.errors.InvalidTextRepresentation) as info:
            conn.execute("INSERT INTO net_detail VALUES ('192.168.1.2/24')")
        diag = info.value.diag
        reports.append((diag.message_primary, diag.message_detail))
    assert (
        reports[0]
        == reports[1]
        == (
            'invalid cidr value: "192.168.1.2/24"',
            "Value has bits set to right of mask.",
        )
    )


# macaddr.sql's inputs, and sscanf's leniencies
MACADDR = [
    "08:00:2b:01:02:03", "08-00-2b-01-02-03", "08002b:010203", "08002b-010203",
    "0800.2b01.0203", "0800-2b01-0203", "08002b010203", "0800:2b01:0203", "not even close",
    "08:00:2b:01:02:04", "08:00:2b:01:02:02", "08:00:2a:01:02:03", "08:00:2c:01:02:03",
    "08:00:2a:01:02:04", "08:00:2b:01:02:ZZ", "08:00:2b:01:02:", "8:0:2B:1:2:3",
    " 08:00:2b:01:02:03 ", "08:00:2b:01:02:03x", "08:00:2b:01:02:100", "08: 00:2b:01:02:03",
    "08 :00:2b:01:02:03", "-1:00:2b:01:02:03", "0x8:00:2b:01:02:03", "FF:FF:FF:FF:FF:FF",
    "00:00:00:00:00:00", "08002B010203 ", "", "08:00:2b:01:02:03:04",
]  # fmt: skip
# macaddr8.sql's inputs
MACADDR8 = [
    "08:00:2b:01:02:03     ", "    08:00:2b:01:02:03     ", "    08:00:2b:01:02:03",
    "08:00:2b:01:02:03:04:05     ", "    08:00:2b:01:02:03:04:05     ",
    "    08:00:2b:01:02:03:04:05", "123    08:00:2b:01:02:03", "08:00:2b:01:02:03  123",
    "123    08:00:2b:01:02:03:04:05", "08:00:2b:01:02:03:04:05  123",
    "08:00:2b:01:02:03:04:05:06:07", "08-00-2b-01-02-03-04-05-06-07", "08002b:01020304050607",
    "08002b01020304050607", "0z002b0102030405", "08002b010203xyza", "08:00-2b:01:02:03:04:05",
    "08:00:2b:01.02:03:04:05", "00:08:2b:01:02:03", "08:00:2b:01:02:03", "08-00-2b-01-02-03",
    "08002b:010203", "08002b-010203", "0800.2b01.0203", "0800-2b01-0203", "08002b010203",
    "0800:2b01:0203", "not even close", "08:00:2b:01:02:04", "08:00:2b:01:02:02",
    "08:00:2a:01:02:03", "08:00:2c:01:02:03", "08:00:2a:01:02:04", "08:00:2b:01:02:03:04:05",
    "08-00-2b-01-02-03-04-05", "08002b:0102030405", "08002b-0102030405", "0800.2b01.0203.0405",
    "08002b01:02030405", "08002b0102030405", "08:00:2b:01:02:03:04:ZZ", "08:00:2b:01:02:03:04:",
    "08:00:2b:01:02:03:04:05x", "FF:FF:FF:FF:FF:FF:FF:FF", "", "0",
]  # fmt: skip


@pytest.mark.parametrize("sql_type", ["macaddr", "macaddr8"])
def test_macaddr(pair: Pair, sql_type: str) -> None:
    values = MACADDR if sql_type == "macaddr" else MACADDR8
    probes = ["08:00:2b:01:02:03", "08002b010203", "08:00:2a:01:02:04"]
    check(pair, sql_type, values, probes=probes)
    check(pair, sql_type, values, as_literals=True)


@pytest.mark.parametrize("sql_type", ["inet", "cidr", "macaddr", "macaddr8"])
def test_description_type_codes(pair: Pair, sql_type: str) -> None:
    table = f"described_{sql_type}"
    pair.both(f"CREATE TABLE {table} (v {sql_type})")
    codes = [c.execute(f"SELECT v FROM {table}").description for c in (pair.plain, pair.enc)]
    assert codes[0] is not None and codes[1] is not None
    assert codes[0][0].type_code == codes[1][0].type_code


def test_copy_prints_as_postgresql(pair: Pair) -> None:
    """COPY TO: each value as PostgreSQL prints it (IPv6 in inet_net_ntop's form, an IPv4
    tail dotted)."""
    pair.both("CREATE TABLE net_copy (id int, i inet, c cidr, m macaddr, m8 macaddr8)")
    rows = [
        (1, "192.168.1.5/24", "10", "0800.2b01.0203", "08002b010203"),
        (2, "::ffff:1.2.3.4", "::ffff:1.2.3.0/120", "08-00-2B-01-02-03", "0800.2b01.0203.0405"),
        (3, "::1:2", "2001:db8::/32", "08002b:010203", "08:00:2b:01:02:03:04:05"),
        (4, "1:0:0:2:0:0:0:3/64", "::/0", "08:00:2b:01:02:03", "08-00-2b-01-02-03"),
    ]
    for conn in (pair.plain, pair.enc):
        for row in rows:
            conn.execute("INSERT INTO net_copy VALUES (%s, %s, %s, %s, %s)", row)
    out = []
    for conn in (pair.plain, pair.enc):
        sql = "COPY (SELECT * FROM net_copy ORDER BY id) TO STDOUT"
        with conn.cursor() as cur, cur.copy(sql) as copy:
            out.append(b"".join(bytes(chunk) for chunk in copy))
    assert out[0] == out[1]


@pytest.mark.parametrize(
    "text",
    ["::", "::1", "1::", "::ffff:1.2.3.4", "::1.2.3.4", "::1:2", "1:0:0:2:0:0:0:3", "1:0:0:2::3",
     "fe80::1:0:0:1", "0:0:1::", "1:2:3:4:5:6:7:8", "::ffff:0:0", "::fffe:1.2.3.4"],
)  # fmt: skip
def test_ipv6_text(pair: Pair, text: str) -> None:
    """The client prints an IPv6 address as the server's inet_out does."""
    row = pair.plain.execute("SELECT format('%%s', %s::text::inet)", (text,)).fetchone()
    assert row is not None
    assert ipv6_text(ipaddress.IPv6Address(text).packed) == row[0]


def test_layers_shows_network_columns(
    new_database: Callable[..., str], master_key: MasterKey
) -> None:
    dsn = new_database("net_layers")
    types = {"i": "inet", "c": "cidr", "m": "macaddr", "m8": "macaddr8"}
    columns = ", ".join(f"{c} {t}" for c, t in types.items())
    with adaptive_client.connect(dsn, master_key=master_key.hex(), autocommit=True) as conn:
        conn.execute(f"CREATE TABLE typed (id int PRIMARY KEY, {columns})")
        conn.execute(
            "INSERT INTO typed VALUES (1, '10.0.0.1/8', '10', '08002b010203', '08002b010203')"
        )
        for column in types:
            conn.execute(f"SELECT id FROM typed ORDER BY {column}").fetchall()
    with psycopg.connect(dsn) as raw:
        rows = admin.layers_report(raw, master_key)
    shown = {(r.column, r.type, r.onion): r for r in rows if r.table == "typed"}
    for column, sql_type in types.items():
        assert (column, sql_type, "Eq") in shown, (column, sorted(shown))
        ord_row = shown[column, sql_type, "Ord"]
        assert ord_row.layer == "OPE"
    assert shown["i", "inet", "Ord"].provider_learns.startswith("order of a 95-bit prefix, and")
    assert shown["c", "cidr", "Ord"].provider_learns.startswith("order of a 95-bit prefix, and")
    assert shown["m", "macaddr", "Ord"].provider_learns.startswith(
        "order of values (and equality), and their approximate values"
    )
