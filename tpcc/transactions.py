"""The five TPC-C transactions (clauses 2.4–2.8), over any DB-API connection.

Each function runs one database transaction and commits it (or rolls back NewOrder's 1%
invalid-item case).  ``timer`` wraps every statement so the driver can record response
times per statement; the statement labels are stable names used in the results.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from .load import FULL, Scale
from .rand import TpccRandom

Timer = Callable[[str], Any]


@contextmanager
def _no_timer(label: str) -> Iterator[None]:
    yield


@dataclass
class Terminal:
    """One emulated terminal: its home warehouse and random stream."""

    w_id: int
    warehouses: int
    rand: TpccRandom
    scale: Scale = FULL
    timer: Timer = field(default=_no_timer)
    clock: Callable[[], dt.datetime] | None = None

    def now(self) -> dt.datetime:
        return self.clock() if self.clock else dt.datetime.now().replace(microsecond=0)

    def q(self, cur: Any, label: str, sql: str, params: tuple[Any, ...] = ()) -> Any:
        with self.timer(label):
            cur.execute(sql, params)
            return cur.fetchall() if cur.description else None

    def other_warehouse(self) -> int:
        if self.warehouses == 1:
            return self.w_id
        w = self.rand.uniform(1, self.warehouses - 1)
        return w if w < self.w_id else w + 1

    def customer_selector(self) -> tuple[str, Any]:
        if self.rand.uniform(1, 100) <= 60:
            # below 1,000 customers per district (test scales) only the names of the first
            # ones exist: draw among those, so a by-name lookup finds someone as at full scale
            top = min(999, self.scale.customers - 1)
            return "last", self.rand.last_name(self.rand.nurand(255, 0, top))
        return "id", self.rand.nurand(1023, 1, self.scale.customers)

    def _customer_by_name(self, cur: Any, w: int, d: int, last: str, label: str) -> int | None:
        rows = self.q(
            cur,
            label,
            "SELECT c_id FROM customer WHERE c_w_id = %s AND c_d_id = %s "
            "AND c_last = %s ORDER BY c_first",
            (w, d, last),
        )
        if not rows:
            return None
        return int(rows[(len(rows) + 1) // 2 - 1][0])

    # -- NewOrder ------------------------------------------------------------------------
    def new_order(self, conn: Any) -> bool:
        r, w = self.rand, self.w_id
        d = r.uniform(1, self.scale.districts)
        c = r.nurand(1023, 1, self.scale.customers)
        n = r.uniform(5, 15)
        rollback = r.uniform(1, 100) == 1
        lines = []
        for i in range(n):
            item = r.nurand(8191, 1, self.scale.items)
            if rollback and i == n - 1:
                item = self.scale.items + 1  # unused: the transaction rolls back
            supply = self.other_warehouse() if r.uniform(1, 100) == 1 else w
            lines.append((item, supply, r.uniform(1, 10)))
        # Stock rows are locked in one global (item, warehouse) order, as TPC-C kits do: two
        # NewOrders sharing items then queue instead of deadlocking.  (The unused item of
        # a rolled-back NewOrder sorts last, so it is still the last line.)
        lines.sort(key=lambda line: line[:2])
        cur = conn.cursor()
        self.q(
            cur,
            "no.customer_warehouse",
            "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse WHERE w_id = %s "
            "AND c_w_id = w_id AND c_d_id = %s AND c_id = %s",
            (w, d, c),
        )
        ((next_o, _d_tax),) = self.q(
            cur,
            "no.district",
            "SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = %s AND d_id = %s FOR UPDATE",
            (w, d),
        )
        self.q(
            cur,
            "no.district_update",
            "UPDATE district SET d_next_o_id = %s WHERE d_w_id = %s AND d_id = %s",
            (next_o + 1, w, d),
        )
        all_local = int(all(s == w for _, s, _ in lines))
        self.q(
            cur,
            "no.insert_orders",
            "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, "
            "o_carrier_id, o_ol_cnt, o_all_local) VALUES (%s, %s, %s, %s, %s, NULL, %s, %s)",
            (next_o, d, w, c, self.now(), n, all_local),
        )
        self.q(
            cur,
            "no.insert_new_order",
            "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (%s, %s, %s)",
            (next_o, d, w),
        )
        for number, (item, supply, qty) in enumerate(lines, start=1):
            found = self.q(
                cur, "no.item", "SELECT i_price, i_name, i_data FROM item WHERE i_id = %s", (item,)
            )
            if not found:
                conn.rollback()
                return False
            price = Decimal(found[0][0])
            ((s_qty, _s_data, dist),) = self.q(
                cur,
                "no.stock",
                f"SELECT s_quantity, s_data, s_dist_{d:02d} FROM stock "
                "WHERE s_i_id = %s AND s_w_id = %s FOR UPDATE",
                (item, supply),
            )
            new_qty = s_qty - qty if s_qty - qty >= 10 else s_qty - qty + 91
            self.q(
                cur,
                "no.stock_update",
                "UPDATE stock SET s_quantity = %s, s_ytd = s_ytd + %s, "
                "s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + %s "
                "WHERE s_i_id = %s AND s_w_id = %s",
                (new_qty, qty, int(supply != w), item, supply),
            )
            self.q(
                cur,
                "no.insert_order_line",
                "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, "
                "ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, "
                "ol_dist_info) VALUES (%s, %s, %s, %s, %s, %s, NULL, %s, %s, %s)",
                (next_o, d, w, number, item, supply, qty, price * qty, dist),
            )
        conn.commit()
        return True

    # -- Payment -------------------------------------------------------------------------
    def payment(self, conn: Any) -> bool:
        r, w = self.rand, self.w_id
        d = r.uniform(1, self.scale.districts)
        if r.uniform(1, 100) <= 85 or self.warehouses == 1:
            c_w, c_d = w, d
        else:
            c_w, c_d = self.other_warehouse(), r.uniform(1, self.scale.districts)
        kind, key = self.customer_selector()
        amount = Decimal(r.uniform(100, 500000)) / 100
        cur = conn.cursor()
        # The specification's order, which under REPEATABLE READ is also the cheap one: the
        # hot rows (warehouse, district) are written first, so a conflicting Payment fails
        # at its first statements rather than after all its work.  Each row is read just
        # before it is updated -- the same statements, and the read serves the update.
        ((w_name,),) = self.q(
            cur, "pay.warehouse", "SELECT w_name FROM warehouse WHERE w_id = %s", (w,)
        )
        self.q(
            cur,
            "pay.warehouse_update",
            "UPDATE warehouse SET w_ytd = w_ytd + %s WHERE w_id = %s",
            (amount, w),
        )
        ((d_name,),) = self.q(
            cur,
            "pay.district",
            "SELECT d_name FROM district WHERE d_w_id = %s AND d_id = %s",
            (w, d),
        )
        self.q(
            cur,
            "pay.district_update",
            "UPDATE district SET d_ytd = d_ytd + %s WHERE d_w_id = %s AND d_id = %s",
            (amount, w, d),
        )
        c = (
            key
            if kind == "id"
            else self._customer_by_name(cur, c_w, c_d, key, "pay.customer_by_name")
        )
        if c is None:
            conn.rollback()
            return False
        ((credit,),) = self.q(
            cur,
            "pay.customer",
            "SELECT c_credit FROM customer WHERE c_w_id = %s "
            "AND c_d_id = %s AND c_id = %s FOR UPDATE",
            (c_w, c_d, c),
        )
        self.q(
            cur,
            "pay.customer_update",
            "UPDATE customer SET c_balance = c_balance - %s, "
            "c_ytd_payment = c_ytd_payment + %s, c_payment_cnt = c_payment_cnt + 1 "
            "WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
            (amount, amount, c_w, c_d, c),
        )
        if str(credit).strip() == "BC":
            ((data,),) = self.q(
                cur,
                "pay.customer_data",
                "SELECT c_data FROM customer WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
                (c_w, c_d, c),
            )
            new = f"{c} {c_d} {c_w} {d} {w} {amount} | {data}"[:500]
            self.q(
                cur,
                "pay.customer_data_update",
                "UPDATE customer SET c_data = %s WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
                (new, c_w, c_d, c),
            )
        self.q(
            cur,
            "pay.insert_history",
            "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, "
            "h_w_id, h_date, h_amount, h_data) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            (c, c_d, c_w, d, w, self.now(), amount, f"{w_name}    {d_name}"[:24]),
        )
        conn.commit()
        return True

    # -- OrderStatus ---------------------------------------------------------------------
    def order_status(self, conn: Any) -> bool:
        r, w = self.rand, self.w_id
        d = r.uniform(1, self.scale.districts)
        kind, key = self.customer_selector()
        cur = conn.cursor()
        c = key if kind == "id" else self._customer_by_name(cur, w, d, key, "os.customer_by_name")
        if c is None:
            conn.rollback()
            return False
        self.q(
            cur,
            "os.customer",
            "SELECT c_balance, c_first, c_middle, c_last FROM customer "
            "WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
            (w, d, c),
        )
        order = self.q(
            cur,
            "os.last_order",
            "SELECT o_id, o_carrier_id, o_entry_d FROM orders "
            "WHERE o_w_id = %s AND o_d_id = %s AND o_c_id = %s ORDER BY o_id DESC LIMIT 1",
            (w, d, c),
        )
        if order:
            self.q(
                cur,
                "os.order_lines",
                "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, "
                "ol_delivery_d FROM order_line WHERE ol_w_id = %s AND ol_d_id = %s "
                "AND ol_o_id = %s",
                (w, d, order[0][0]),
            )
        conn.commit()
        return True

    # -- Delivery ------------------------------------------------------------------------
    def delivery(self, conn: Any) -> bool:
        r, w = self.rand, self.w_id
        carrier = r.uniform(1, 10)
        cur = conn.cursor()
        for d in range(1, self.scale.districts + 1):
            rows = self.q(
                cur,
                "dl.new_order",
                "SELECT no_o_id FROM new_order WHERE no_d_id = %s "
                "AND no_w_id = %s ORDER BY no_o_id LIMIT 1",
                (d, w),
            )
            if not rows:
                continue
            o = rows[0][0]
            self.q(
                cur,
                "dl.delete_new_order",
                "DELETE FROM new_order WHERE no_w_id = %s AND no_d_id = %s AND no_o_id = %s",
                (w, d, o),
            )
            if cur.rowcount == 0:
                continue  # delivered by a concurrent Delivery
            ((c,),) = self.q(
                cur,
                "dl.order",
                "SELECT o_c_id FROM orders WHERE o_id = %s AND o_d_id = %s AND o_w_id = %s",
                (o, d, w),
            )
            self.q(
                cur,
                "dl.order_update",
                "UPDATE orders SET o_carrier_id = %s WHERE o_id = %s "
                "AND o_d_id = %s AND o_w_id = %s",
                (carrier, o, d, w),
            )
            self.q(
                cur,
                "dl.order_line_update",
                "UPDATE order_line SET ol_delivery_d = %s "
                "WHERE ol_o_id = %s AND ol_d_id = %s AND ol_w_id = %s",
                (self.now(), o, d, w),
            )
            ((total,),) = self.q(
                cur,
                "dl.order_line_sum",
                "SELECT SUM(ol_amount) FROM order_line "
                "WHERE ol_o_id = %s AND ol_d_id = %s AND ol_w_id = %s",
                (o, d, w),
            )
            self.q(
                cur,
                "dl.customer_update",
                "UPDATE customer SET c_balance = c_balance + %s, "
                "c_delivery_cnt = c_delivery_cnt + 1 WHERE c_id = %s AND c_d_id = %s "
                "AND c_w_id = %s",
                (total or Decimal(0), c, d, w),
            )
        conn.commit()
        return True

    # -- StockLevel ----------------------------------------------------------------------
    def stock_level(self, conn: Any) -> bool:
        r, w = self.rand, self.w_id
        d = r.uniform(1, self.scale.districts)
        threshold = r.uniform(10, 20)
        cur = conn.cursor()
        ((next_o,),) = self.q(
            cur,
            "sl.district",
            "SELECT d_next_o_id FROM district WHERE d_w_id = %s AND d_id = %s",
            (w, d),
        )
        self.q(
            cur,
            "sl.stock_count",
            "SELECT COUNT(DISTINCT ol_i_id) FROM order_line, stock "
            "WHERE ol_w_id = %s AND ol_d_id = %s AND ol_o_id < %s AND ol_o_id >= %s "
            "AND s_w_id = %s AND s_i_id = ol_i_id AND s_quantity < %s",
            (w, d, next_o, next_o - 20, w, threshold),
        )
        conn.commit()
        return True


MIX = [("new_order", 45), ("payment", 43), ("order_status", 4), ("delivery", 4), ("stock_level", 4)]


def pick(rand: TpccRandom) -> str:
    x = rand.uniform(1, 100)
    for name, weight in MIX:
        if x <= weight:
            return name
        x -= weight
    return MIX[-1][0]
