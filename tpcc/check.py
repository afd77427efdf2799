"""The specification's consistency conditions 1–4 (clause 3.3.2), read through any connection.

The checker reads plain columns only (no predicates, no server-side aggregates), so it
needs no peel on an adaptive database and works identically on all three configurations.
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal
from typing import Any


def check(conn: Any) -> list[str]:
    """Return the violated conditions (empty: consistent)."""
    q = lambda sql: conn.execute(sql).fetchall()  # noqa: E731
    problems: list[str] = []
    w_ytd = {w: Decimal(y) for w, y in q("SELECT w_id, w_ytd FROM warehouse")}
    districts = q("SELECT d_w_id, d_id, d_ytd, d_next_o_id FROM district")
    d_sum: dict[int, Decimal] = defaultdict(Decimal)
    for w, _d, ytd, _n in districts:
        d_sum[w] += Decimal(ytd)
    for w, y in w_ytd.items():  # condition 1
        if y != d_sum[w]:
            problems.append(f"1: warehouse {w}: W_YTD {y} != sum(D_YTD) {d_sum[w]}")
    max_o: dict[tuple[int, int], int] = defaultdict(int)
    ol_cnt: dict[tuple[int, int], int] = defaultdict(int)
    for w, d, o, cnt in q("SELECT o_w_id, o_d_id, o_id, o_ol_cnt FROM orders"):
        max_o[(w, d)] = max(max_o[(w, d)], o)
        ol_cnt[(w, d)] += cnt
    no: dict[tuple[int, int], list[int]] = defaultdict(list)
    for w, d, o in q("SELECT no_w_id, no_d_id, no_o_id FROM new_order"):
        no[(w, d)].append(o)
    lines: dict[tuple[int, int], int] = defaultdict(int)
    for w, d in q("SELECT ol_w_id, ol_d_id FROM order_line"):
        lines[(w, d)] += 1
    for w, d, _ytd, next_o in districts:
        key = (w, d)
        if next_o - 1 != max_o[key] or (no[key] and max(no[key]) != max_o[key]):  # condition 2
            problems.append(
                f"2: district {key}: D_NEXT_O_ID-1={next_o - 1}, max(O_ID)={max_o[key]}, "
                f"max(NO_O_ID)={max(no[key]) if no[key] else None}"
            )
        if no[key] and max(no[key]) - min(no[key]) + 1 != len(no[key]):  # condition 3
            problems.append(f"3: district {key}: NEW_ORDER rows {len(no[key])} != id range")
        if ol_cnt[key] != lines[key]:  # condition 4
            problems.append(
                f"4: district {key}: sum(O_OL_CNT)={ol_cnt[key]} != ORDER_LINE rows {lines[key]}"
            )
    conn.commit()
    return problems
