"""An application's read queries over a small shop, by construct: the corpus of the
split-execution differential suite (test_read_queries.py).

Every query is deterministic under PostgreSQL: an ORDER BY is a total order (ties broken
by a key), or the rows are compared as a multiset; aggregates whose result depends on the
order of their input (float sums, string_agg without ORDER BY) are left out.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

DDL = [
    "CREATE TABLE region (code char(2) PRIMARY KEY, label varchar(30) NOT NULL)",
    "CREATE TABLE customer (id integer PRIMARY KEY, name varchar(40), email text, "
    "region char(2) REFERENCES region (code), born date, credit numeric(10,2), vip boolean)",
    "CREATE TABLE product (sku integer PRIMARY KEY, title text NOT NULL, category varchar(20), "
    "price numeric(8,2) NOT NULL, weight integer)",
    "CREATE TABLE orders (id integer PRIMARY KEY, customer_id integer REFERENCES customer (id), "
    "placed timestamp NOT NULL, status varchar(10), note text)",
    "CREATE TABLE item (order_id integer REFERENCES orders (id), sku integer REFERENCES "
    "product (sku), qty integer NOT NULL, discount numeric(3,2), PRIMARY KEY (order_id, sku))",
]

NAMES = ["Ann Lee", "bob", "Élise Martin", None, "Zoë", "ann lee", "Bob Stone", "", "Ömer",
         "d'Arcy", "Chloé", "ZED"]  # fmt: skip
TITLES = ["Red mug", "blue mug", "Mug, large", "Tea pot", "tea cup", "Café crème", "Çay glass",
          "kettle 1L", "Kettle 2L", "Spoon_set", "100% cotton towel", "Towel"]  # fmt: skip
CATEGORIES = ["kitchen", "Kitchen", "bath", None]
STATUSES = ["new", "paid", "shipped", "returned", None]


def rows() -> dict[str, list[tuple[Any, ...]]]:
    region = [("NO", "North"), ("SO", "South"), ("EA", "East"), ("WE", "Wëst")]
    customer = [
        (
            i,
            NAMES[i - 1],
            None if i % 5 == 0 else f"{(NAMES[i - 1] or 'x').split(' ')[0].lower()}{i}@ex.org",
            None if i % 6 == 0 else region[i % 4][0],
            None if i % 7 == 0 else dt.date(1950 + 5 * i, 1 + i % 12, 1 + (3 * i) % 28),
            None if i % 4 == 0 else Decimal(i * 1234 % 5000 - 1500) / 10,
            None if i % 3 == 0 else i % 2 == 0,
        )
        for i in range(1, len(NAMES) + 1)
    ]
    product = [
        (
            100 + i,
            TITLES[i],
            CATEGORIES[i % 4],
            Decimal(i * 379 % 4000 + 99) / 100,
            None if i % 5 == 4 else (i * 7) % 13 - 2,
        )
        for i in range(len(TITLES))
    ]
    orders = []
    item = []
    for i in range(1, 61):
        cust = (i * 5) % (len(NAMES) + 2) + 1  # ids 13 and 14 do not exist: no order of theirs
        cust_id = cust if cust <= len(NAMES) else None
        placed = dt.datetime(2024, 1 + i % 12, 1 + (i * 11) % 28, (i * 5) % 24, (i * 7) % 60)
        note = [None, "gift", "Gift wrap", "leave at door", "call first", ""][i % 6]
        orders.append((i, cust_id, placed, STATUSES[i % 5], note))
        for j in range(i % 4 + 1):
            sku = 100 + (i * 3 + j * 5) % len(TITLES)
            disc = None if (i + j) % 5 == 0 else Decimal((i + j) % 4 * 5) / 100
            item.append((i, sku, (i * j) % 7 + 1, disc))
    return {"region": region, "customer": customer, "product": product, "orders": orders,
            "item": item}  # fmt: skip


# (construct family, sql, params)
Query = tuple[str, str, tuple[Any, ...]]

FUNCTIONS: list[Query] = [
    ("fn", "SELECT id, lower(name), upper(name), length(name) FROM customer ORDER BY id", ()),
    ("fn", "SELECT id, initcap(name) FROM customer ORDER BY id", ()),
    (
        "fn",
        "SELECT sku, left(title, 3), right(title, 2), reverse(title) FROM product ORDER BY sku",
        (),
    ),
    (
        "fn",
        "SELECT sku, replace(title, 'mug', 'cup'), trim(title), ltrim(title, 'T') FROM product ORDER BY sku",
        (),
    ),
    (
        "fn",
        "SELECT sku, lpad(title, 12, '*'), rpad(category, 8, '.') FROM product ORDER BY sku",
        (),
    ),
    (
        "fn",
        "SELECT id, coalesce(email, name, 'anon'), nullif(name, '') FROM customer ORDER BY id",
        (),
    ),
    (
        "fn",
        "SELECT id, split_part(email, '@', 1), strpos(email, '@') FROM customer ORDER BY id",
        (),
    ),
    (
        "fn",
        "SELECT sku, abs(weight), sign(weight), mod(weight, 3), weight % 4 FROM product ORDER BY sku",
        (),
    ),
    (
        "fn",
        "SELECT sku, round(price), round(price, 1), trunc(price), ceil(price), floor(price) FROM product ORDER BY sku",
        (),
    ),
    ("fn", "SELECT sku, price * 1.1, price - 0.5, price / 4, -price FROM product ORDER BY sku", ()),
    ("fn", "SELECT id, greatest(credit, 0), least(credit, 100) FROM customer ORDER BY id", ()),
    (
        "fn",
        "SELECT id, extract(year FROM born), extract(month FROM born), extract(day FROM born) FROM customer ORDER BY id",
        (),
    ),
    (
        "fn",
        "SELECT id, date_trunc('month', placed), date_trunc('day', placed) FROM orders ORDER BY id",
        (),
    ),
    (
        "fn",
        "SELECT id, extract(hour FROM placed), extract(minute FROM placed), extract(isodow FROM placed) FROM orders ORDER BY id",
        (),
    ),
    ("fn", "SELECT id, placed::date, CAST(placed AS date) + 7 FROM orders ORDER BY id", ()),
    ("fn", "SELECT id, born + 30, born - date '1970-01-01' FROM customer ORDER BY id", ()),
    (
        "fn",
        "SELECT id, placed + interval '1 day', placed - interval '2 hours' FROM orders ORDER BY id",
        (),
    ),
    (
        "fn",
        "SELECT id, concat(name, '/', region), name || ' <' || email || '>' FROM customer ORDER BY id",
        (),
    ),
    (
        "fn",
        "SELECT sku, title::varchar(4), price::integer, weight::numeric / 3 FROM product ORDER BY sku",
        (),
    ),
    ("fn", "SELECT id, vip, NOT vip, vip IS TRUE, vip IS NOT FALSE FROM customer ORDER BY id", ()),
    ("fn", "SELECT id, name IS NULL, email IS NOT NULL FROM customer ORDER BY id", ()),
    (
        "fn",
        "SELECT code, label, char_length(label), octet_length(label) FROM region ORDER BY code",
        (),
    ),
    (
        "fn",
        "SELECT sku, substr(title, 2), substring(title FROM 1 FOR 4), position('e' IN title) FROM product ORDER BY sku",
        (),
    ),
    ("fn", "SELECT id, md5(name) FROM customer ORDER BY id", ()),
    ("fn", "SELECT id, repeat(region, 2), starts_with(name, 'A') FROM customer ORDER BY id", ()),
]

CASES: list[Query] = [
    (
        "case",
        "SELECT sku, CASE WHEN price < 10 THEN 'cheap' WHEN price < 25 THEN 'mid' ELSE 'dear' END FROM product ORDER BY sku",
        (),
    ),
    (
        "case",
        "SELECT id, CASE status WHEN 'new' THEN 0 WHEN 'paid' THEN 1 ELSE 2 END FROM orders ORDER BY id",
        (),
    ),
    ("case", "SELECT id, CASE WHEN vip THEN credit ELSE 0 END FROM customer ORDER BY id", ()),
    (
        "case",
        "SELECT CASE WHEN weight IS NULL THEN 'unknown' WHEN weight < 0 THEN 'neg' ELSE 'ok' END AS w, count(*) FROM product GROUP BY 1 ORDER BY 1",
        (),
    ),
    (
        "case",
        "SELECT sum(CASE WHEN status = 'paid' THEN 1 ELSE 0 END), sum(CASE WHEN note IS NULL THEN 1 END) FROM orders",
        (),
    ),
    (
        "case",
        "SELECT order_id, sum(qty * CASE WHEN discount IS NULL THEN 1 ELSE 1 - discount END) FROM item GROUP BY order_id ORDER BY order_id",
        (),
    ),
    (
        "case",
        "SELECT id FROM customer WHERE CASE WHEN vip THEN credit > 0 ELSE credit < 0 END ORDER BY id",
        (),
    ),
    (
        "case",
        "SELECT id, coalesce(CASE WHEN born > '1990-01-01' THEN 'young' END, 'other') FROM customer ORDER BY id",
        (),
    ),
]

AGGREGATES: list[Query] = [
    (
        "agg",
        "SELECT count(*), count(name), count(DISTINCT region), min(born), max(born) FROM customer",
        (),
    ),
    ("agg", "SELECT sum(credit), avg(credit), min(credit), max(credit) FROM customer", ()),
    (
        "agg",
        "SELECT region, count(*), sum(credit) FROM customer GROUP BY region ORDER BY region NULLS FIRST",
        (),
    ),
    (
        "agg",
        "SELECT category, avg(price), sum(weight), count(weight) FROM product GROUP BY category ORDER BY category",
        (),
    ),
    (
        "agg",
        "SELECT status, count(*) FILTER (WHERE note IS NOT NULL), count(*) FROM orders GROUP BY status ORDER BY status",
        (),
    ),
    ("agg", "SELECT bool_and(vip), bool_or(vip), every(vip) FROM customer", ()),
    ("agg", "SELECT region, bool_or(vip) FROM customer GROUP BY region ORDER BY region", ()),
    ("agg", "SELECT string_agg(title, ', ' ORDER BY title) FROM product", ()),
    (
        "agg",
        "SELECT category, string_agg(title, '|' ORDER BY sku) FROM product GROUP BY category ORDER BY category",
        (),
    ),
    ("agg", "SELECT array_agg(sku ORDER BY sku) FROM product WHERE price > 10", ()),
    (
        "agg",
        "SELECT order_id, sum(qty), count(*), max(discount) FROM item GROUP BY order_id HAVING sum(qty) > 6 ORDER BY order_id",
        (),
    ),
    ("agg", "SELECT sku, avg(qty), sum(qty * 2) FROM item GROUP BY sku ORDER BY sku", ()),
    ("agg", "SELECT count(DISTINCT customer_id), count(DISTINCT status) FROM orders", ()),
    (
        "agg",
        "SELECT extract(month FROM placed) AS m, count(*) FROM orders GROUP BY m ORDER BY m",
        (),
    ),
    (
        "agg",
        "SELECT date_trunc('month', placed) AS m, count(DISTINCT customer_id) FROM orders GROUP BY 1 ORDER BY 1",
        (),
    ),
    (
        "agg",
        "SELECT lower(category), count(*) FROM product GROUP BY lower(category) ORDER BY 1",
        (),
    ),
    ("agg", "SELECT weight % 2, sum(price) FROM product GROUP BY weight % 2 ORDER BY 1", ()),
    (
        "agg",
        "SELECT customer_id, min(placed), max(placed) FROM orders GROUP BY customer_id HAVING count(*) >= 5 ORDER BY customer_id",
        (),
    ),
    (
        "agg",
        "SELECT region FROM customer GROUP BY region HAVING avg(credit) > 0 ORDER BY region",
        (),
    ),
    (
        "agg",
        "SELECT count(*) FROM orders WHERE placed >= '2024-06-01' AND placed < '2024-09-01'",
        (),
    ),
    ("agg", "SELECT sum(price * weight), avg(price * 2) FROM product", ()),
    ("agg", "SELECT max(length(title)), min(lower(title)) FROM product", ()),
    (
        "agg",
        "SELECT status, count(*) AS n FROM orders GROUP BY status HAVING count(*) > 10 ORDER BY n DESC, status",
        (),
    ),
    (
        "agg",
        "SELECT sum(qty) FILTER (WHERE discount > 0), sum(qty) FILTER (WHERE discount IS NULL) FROM item",
        (),
    ),
]

WINDOWS: list[Query] = [
    ("win", "SELECT id, row_number() OVER (ORDER BY placed, id) FROM orders ORDER BY id", ()),
    (
        "win",
        "SELECT id, rank() OVER (PARTITION BY customer_id ORDER BY placed) FROM orders ORDER BY id",
        (),
    ),
    (
        "win",
        "SELECT sku, dense_rank() OVER (ORDER BY category NULLS LAST) FROM product ORDER BY sku",
        (),
    ),
    (
        "win",
        "SELECT id, lag(placed) OVER (ORDER BY id), lead(status, 2) OVER (ORDER BY id) FROM orders ORDER BY id",
        (),
    ),
    (
        "win",
        "SELECT id, sum(credit) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM customer ORDER BY id",
        (),
    ),
    ("win", "SELECT id, sum(credit) OVER (ORDER BY id) FROM customer ORDER BY id", ()),
    (
        "win",
        "SELECT sku, price, avg(price) OVER (PARTITION BY category) FROM product ORDER BY sku",
        (),
    ),
    (
        "win",
        "SELECT sku, count(*) OVER (PARTITION BY category), max(price) OVER (PARTITION BY category) FROM product ORDER BY sku",
        (),
    ),
    (
        "win",
        "SELECT order_id, sku, sum(qty) OVER (PARTITION BY order_id ORDER BY sku) FROM item ORDER BY order_id, sku",
        (),
    ),
    (
        "win",
        "SELECT id, first_value(id) OVER (PARTITION BY status ORDER BY id), last_value(id) OVER (PARTITION BY status ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM orders ORDER BY id",
        (),
    ),
    (
        "win",
        "SELECT id, ntile(4) OVER (ORDER BY id), percent_rank() OVER (ORDER BY id) FROM customer ORDER BY id",
        (),
    ),
    (
        "win",
        "SELECT * FROM (SELECT id, customer_id, row_number() OVER (PARTITION BY customer_id ORDER BY placed DESC, id) AS rn FROM orders) t WHERE rn = 1 ORDER BY id",
        (),
    ),
    ("win", "SELECT sku, price, rank() OVER (ORDER BY price DESC) FROM product ORDER BY sku", ()),
    (
        "win",
        "SELECT region, count(*), sum(count(*)) OVER (ORDER BY region) FROM customer WHERE region IS NOT NULL GROUP BY region ORDER BY region",
        (),
    ),
]

SETS: list[Query] = [
    ("set", "SELECT name FROM customer UNION SELECT title FROM product ORDER BY 1", ()),
    (
        "set",
        "SELECT region FROM customer UNION ALL SELECT code FROM region ORDER BY 1 NULLS FIRST",
        (),
    ),
    ("set", "SELECT code FROM region EXCEPT SELECT region FROM customer", ()),
    ("set", "SELECT code FROM region INTERSECT SELECT region FROM customer ORDER BY 1", ()),
    ("set", "SELECT customer_id FROM orders EXCEPT ALL SELECT id FROM customer WHERE vip", ()),
    ("set", "SELECT customer_id FROM orders INTERSECT ALL SELECT id FROM customer", ()),
    (
        "set",
        "SELECT sku FROM item WHERE qty > 5 UNION SELECT sku FROM product WHERE price < 5 ORDER BY sku",
        (),
    ),
    (
        "set",
        "SELECT lower(name) AS n FROM customer UNION SELECT lower(title) FROM product ORDER BY n",
        (),
    ),
    (
        "set",
        "SELECT id, 'c' FROM customer WHERE vip UNION ALL SELECT id, 'o' FROM orders WHERE status = 'new' ORDER BY 2, 1",
        (),
    ),
    (
        "set",
        "(SELECT sku FROM product ORDER BY price DESC, sku LIMIT 3) UNION ALL (SELECT sku FROM product ORDER BY price, sku LIMIT 2)",
        (),
    ),
    (
        "set",
        "SELECT count(*) FROM (SELECT region FROM customer UNION SELECT code FROM region) u",
        (),
    ),
]

SUBQUERIES: list[Query] = [
    (
        "sub",
        "SELECT c.id FROM customer c WHERE c.id IN (SELECT o.customer_id FROM orders o WHERE o.customer_id = c.id AND o.status = 'paid') ORDER BY 1",
        (),
    ),
    (
        "sub",
        "SELECT status, count(DISTINCT customer_id), count(*) FROM orders WHERE customer_id NOT IN (SELECT id FROM customer WHERE vip) GROUP BY status ORDER BY status NULLS FIRST",
        (),
    ),
    (
        "sub",
        "SELECT c.name, count(DISTINCT o.status) FROM customer c JOIN orders o ON o.customer_id = c.id WHERE lower(c.name) NOT LIKE '%e%' AND o.id NOT IN (SELECT order_id FROM item WHERE qty > 5) GROUP BY c.name ORDER BY 1 NULLS FIRST",
        (),
    ),
    (
        "sub",
        "SELECT c.region, count(DISTINCT c.name) FROM customer c WHERE c.region NOT LIKE 'N%' GROUP BY c.region ORDER BY 1 NULLS FIRST",
        (),
    ),
    (
        "sub",
        "SELECT id FROM customer WHERE id IN (SELECT customer_id FROM orders WHERE status = 'paid') ORDER BY id",
        (),
    ),
    (
        "sub",
        "SELECT id FROM customer WHERE id NOT IN (SELECT customer_id FROM orders WHERE customer_id IS NOT NULL) ORDER BY id",
        (),
    ),
    (
        "sub",
        "SELECT id FROM customer WHERE id NOT IN (SELECT customer_id FROM orders) ORDER BY id",
        (),
    ),
    (
        "sub",
        "SELECT c.id FROM customer c WHERE EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id AND o.note ILIKE 'gift%') ORDER BY c.id",
        (),
    ),
    (
        "sub",
        "SELECT c.id FROM customer c WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id) ORDER BY c.id",
        (),
    ),
    (
        "sub",
        "SELECT c.name, (SELECT count(*) FROM orders o WHERE o.customer_id = c.id) AS n FROM customer c ORDER BY c.id",
        (),
    ),
    (
        "sub",
        "SELECT c.id, (SELECT max(placed) FROM orders o WHERE o.customer_id = c.id) FROM customer c ORDER BY c.id",
        (),
    ),
    (
        "sub",
        "SELECT sku FROM product WHERE price > (SELECT avg(price) FROM product) ORDER BY sku",
        (),
    ),
    (
        "sub",
        "SELECT sku FROM product p WHERE price >= ALL (SELECT price FROM product q WHERE q.category = p.category) ORDER BY sku",
        (),
    ),
    (
        "sub",
        "SELECT sku FROM product WHERE price < ANY (SELECT price FROM product WHERE category = 'bath') ORDER BY sku",
        (),
    ),
    (
        "sub",
        "SELECT o.id FROM orders o WHERE o.placed = (SELECT min(placed) FROM orders p WHERE p.customer_id = o.customer_id) ORDER BY o.id",
        (),
    ),
    (
        "sub",
        "SELECT t.category, t.n FROM (SELECT category, count(*) AS n FROM product GROUP BY category) t WHERE t.n > 2 ORDER BY t.category",
        (),
    ),
    (
        "sub",
        "SELECT s.id, s.total FROM (SELECT order_id AS id, sum(qty) AS total FROM item GROUP BY order_id) s JOIN orders o ON o.id = s.id WHERE o.status = 'shipped' ORDER BY s.id",
        (),
    ),
    (
        "sub",
        "SELECT id FROM orders WHERE customer_id IN (SELECT id FROM customer WHERE lower(name) LIKE 'b%') ORDER BY id",
        (),
    ),
    (
        "sub",
        "SELECT sku FROM product p WHERE EXISTS (SELECT 1 FROM item i WHERE i.sku = p.sku AND i.qty > 5) ORDER BY sku",
        (),
    ),
    (
        "sub",
        "SELECT sku, (SELECT sum(qty) FROM item i WHERE i.sku = p.sku) FROM product p ORDER BY sku",
        (),
    ),
    (
        "sub",
        "SELECT id FROM customer WHERE credit > (SELECT avg(credit) FROM customer c2 WHERE c2.region = customer.region) ORDER BY id",
        (),
    ),
    (
        "sub",
        "SELECT id FROM customer WHERE (SELECT count(*) FROM orders WHERE customer_id = customer.id) > 4 ORDER BY id",
        (),
    ),
    (
        "sub",
        "SELECT (SELECT count(*) FROM customer), (SELECT count(*) FROM orders), (SELECT max(price) FROM product)",
        (),
    ),
]

CTES: list[Query] = [
    (
        "cte",
        "WITH spend AS (SELECT o.customer_id, sum(i.qty * p.price) AS total FROM orders o JOIN item i ON i.order_id = o.id JOIN product p ON p.sku = i.sku GROUP BY o.customer_id) SELECT * FROM spend ORDER BY customer_id NULLS LAST",
        (),
    ),
    (
        "cte",
        "WITH r AS (SELECT region, count(*) AS n FROM customer GROUP BY region) SELECT a.region, a.n, b.n FROM r a JOIN r b ON a.n = b.n AND a.region < b.region ORDER BY 1, 3",
        (),
    ),
    (
        "cte",
        "WITH cheap AS (SELECT sku FROM product WHERE price < 15), used AS (SELECT DISTINCT sku FROM item) SELECT sku FROM cheap WHERE sku IN (SELECT sku FROM used) ORDER BY sku",
        (),
    ),
    (
        "cte",
        "WITH m AS (SELECT date_trunc('month', placed) AS month, count(*) AS n FROM orders GROUP BY 1) SELECT month, n, n - lag(n) OVER (ORDER BY month) FROM m ORDER BY month",
        (),
    ),
    (
        "cte",
        "WITH x AS (SELECT id, credit FROM customer WHERE credit IS NOT NULL) SELECT count(*), sum(credit) FROM x WHERE credit > 0",
        (),
    ),
    (
        "cte",
        "WITH big AS (SELECT order_id FROM item GROUP BY order_id HAVING count(*) >= 3) SELECT o.id, o.status FROM orders o JOIN big ON big.order_id = o.id ORDER BY o.id",
        (),
    ),
]

LIKES: list[Query] = [
    ("like", "SELECT sku FROM product WHERE title LIKE '%mug%' ORDER BY sku", ()),
    ("like", "SELECT sku FROM product WHERE title ILIKE '%MUG%' ORDER BY sku", ()),
    ("like", "SELECT sku FROM product WHERE title LIKE 'T%' ORDER BY sku", ()),
    ("like", "SELECT sku FROM product WHERE title ILIKE 'k%l' ORDER BY sku", ()),
    ("like", "SELECT sku FROM product WHERE title LIKE '%\\_%' ORDER BY sku", ()),
    ("like", "SELECT sku FROM product WHERE title LIKE '100\\%%' ORDER BY sku", ()),
    ("like", "SELECT sku FROM product WHERE title LIKE '_ea%' ORDER BY sku", ()),
    ("like", "SELECT sku FROM product WHERE title NOT ILIKE '%e%' ORDER BY sku", ()),
    (
        "like",
        "SELECT sku FROM product WHERE title ILIKE '%CRÈME%' OR title ILIKE 'ça%' ORDER BY sku",
        (),
    ),
    ("like", "SELECT id FROM customer WHERE name LIKE '%' ORDER BY id", ()),
    ("like", "SELECT id FROM customer WHERE email LIKE %s ORDER BY id", ("%@ex.org",)),
    ("like", "SELECT id FROM customer WHERE name ~ '^[A-Z]' ORDER BY id", ()),
    ("like", "SELECT id FROM customer WHERE name ~* 'lee$' ORDER BY id", ()),
    ("like", "SELECT id FROM customer WHERE name !~ 'o' ORDER BY id", ()),
    ("like", "SELECT id FROM orders WHERE note LIKE '%door%' OR note LIKE 'call%' ORDER BY id", ()),
    ("like", "SELECT count(*) FROM orders WHERE note ILIKE '%gift%'", ()),
    ("like", "SELECT sku, title LIKE '%e%' FROM product ORDER BY sku", ()),
]

TEXT_ORDER: list[Query] = [
    ("text", "SELECT id, name FROM customer ORDER BY name, id", ()),
    ("text", "SELECT id, name FROM customer ORDER BY name DESC NULLS LAST, id", ()),
    ("text", "SELECT sku FROM product WHERE title > 'm' ORDER BY sku", ()),
    ("text", "SELECT sku FROM product WHERE title BETWEEN 'B' AND 'T' ORDER BY sku", ()),
    ("text", "SELECT sku, title FROM product ORDER BY title, sku LIMIT 5", ()),
    ("text", "SELECT min(title), max(title) FROM product", ()),
    (
        "text",
        "SELECT category, min(title) FROM product GROUP BY category ORDER BY category NULLS FIRST",
        (),
    ),
    ("text", "SELECT id FROM customer WHERE name < %s ORDER BY id", ("bob",)),
    ("text", "SELECT id FROM customer WHERE name >= 'Z' ORDER BY id", ()),
    ("text", "SELECT lower(title) FROM product ORDER BY lower(title)", ()),
    ("text", "SELECT code, label FROM region ORDER BY label", ()),
]

EXPRESSION_PREDICATES: list[Query] = [
    ("expr", "SELECT sku FROM product WHERE price * weight > 100 ORDER BY sku", ()),
    ("expr", "SELECT sku FROM product WHERE price + weight BETWEEN 10 AND 30 ORDER BY sku", ()),
    ("expr", "SELECT id FROM customer WHERE lower(name) = 'ann lee' ORDER BY id", ()),
    ("expr", "SELECT id FROM customer WHERE length(name) > 4 ORDER BY id", ()),
    ("expr", "SELECT id FROM orders WHERE extract(month FROM placed) = 3 ORDER BY id", ()),
    ("expr", "SELECT id FROM orders WHERE placed::date > date '2024-06-15' ORDER BY id", ()),
    (
        "expr",
        "SELECT order_id, sku FROM item WHERE qty * (1 - coalesce(discount, 0)) > 4 ORDER BY 1, 2",
        (),
    ),
    ("expr", "SELECT id FROM customer WHERE credit / 2 > 100 OR credit IS NULL ORDER BY id", ()),
    ("expr", "SELECT id FROM customer WHERE coalesce(vip, false) ORDER BY id", ()),
    ("expr", "SELECT sku FROM product WHERE weight % 3 = 0 ORDER BY sku", ()),
    ("expr", "SELECT id FROM orders WHERE id % 7 = customer_id % 7 ORDER BY id", ()),
    ("expr", "SELECT id FROM customer WHERE born + 365 * 40 > date '2000-01-01' ORDER BY id", ()),
    ("expr", "SELECT id FROM customer WHERE upper(region) IN ('NO', 'EA') ORDER BY id", ()),
    ("expr", "SELECT id FROM customer WHERE NOT (credit > 0 AND vip) ORDER BY id", ()),
    ("expr", "SELECT sku FROM product WHERE (price > 20) = (weight > 5) ORDER BY sku", ()),
    ("expr", "SELECT id FROM orders WHERE placed > now() - interval '100 years' ORDER BY id", ()),
]

JOINS: list[Query] = [
    (
        "join",
        "SELECT o.id, c.name FROM orders o JOIN customer c ON c.id = o.customer_id ORDER BY o.id",
        (),
    ),
    (
        "join",
        "SELECT o.id, c.name FROM orders o LEFT JOIN customer c ON c.id = o.customer_id ORDER BY o.id",
        (),
    ),
    (
        "join",
        "SELECT c.id, count(o.id) FROM customer c LEFT JOIN orders o ON o.customer_id = c.id GROUP BY c.id ORDER BY c.id",
        (),
    ),
    (
        "join",
        "SELECT c.id, o.id FROM orders o RIGHT JOIN customer c ON c.id = o.customer_id AND o.status = 'paid' ORDER BY c.id, o.id",
        (),
    ),
    (
        "join",
        "SELECT c.id, o.id FROM customer c FULL JOIN orders o ON c.id = o.customer_id AND o.id < 10 ORDER BY c.id NULLS FIRST, o.id NULLS FIRST",
        (),
    ),
    (
        "join",
        "SELECT p.category, sum(i.qty * p.price) FROM item i JOIN product p ON p.sku = i.sku GROUP BY p.category ORDER BY p.category",
        (),
    ),
    (
        "join",
        "SELECT r.label, count(*) FROM region r, customer c WHERE c.region = r.code GROUP BY r.label ORDER BY r.label",
        (),
    ),
    (
        "join",
        "SELECT c.name, p.title FROM customer c JOIN orders o ON o.customer_id = c.id JOIN item i ON i.order_id = o.id JOIN product p ON p.sku = i.sku WHERE p.price > 30 ORDER BY c.id, o.id, p.sku",
        (),
    ),
    (
        "join",
        "SELECT a.id, b.id FROM customer a JOIN customer b ON a.region = b.region AND a.id < b.id ORDER BY 1, 2",
        (),
    ),
    (
        "join",
        "SELECT o.id, i.sku FROM orders o LEFT JOIN item i ON i.order_id = o.id AND i.qty > 3 WHERE o.id < 15 ORDER BY 1, 2",
        (),
    ),
    (
        "join",
        "SELECT p.sku, count(i.order_id) FROM product p LEFT JOIN item i ON i.sku = p.sku GROUP BY p.sku HAVING count(i.order_id) < 5 ORDER BY p.sku",
        (),
    ),
    (
        "join",
        "SELECT c.id, p.sku FROM customer c CROSS JOIN product p WHERE c.id < 3 AND p.sku < 103 ORDER BY 1, 2",
        (),
    ),
    (
        "join",
        "SELECT c.id FROM customer c JOIN orders o ON lower(c.name) = lower(o.note) ORDER BY c.id",
        (),
    ),
    (
        "join",
        "SELECT o.id, p.title FROM orders o JOIN product p ON o.id + 100 = p.sku ORDER BY o.id",
        (),
    ),
]

DISTINCT_LIMIT: list[Query] = [
    ("misc", "SELECT DISTINCT region FROM customer ORDER BY region NULLS FIRST", ()),
    ("misc", "SELECT DISTINCT category, lower(category) FROM product ORDER BY 1, 2", ()),
    (
        "misc",
        "SELECT DISTINCT ON (customer_id) customer_id, id, placed FROM orders ORDER BY customer_id, placed DESC, id",
        (),
    ),
    ("misc", "SELECT id, credit FROM customer ORDER BY credit DESC NULLS LAST, id LIMIT 4", ()),
    (
        "misc",
        "SELECT id, credit FROM customer ORDER BY credit NULLS FIRST, id LIMIT 3 OFFSET 2",
        (),
    ),
    ("misc", "SELECT sku FROM product ORDER BY price DESC, sku OFFSET 9", ()),
    ("misc", "SELECT id, born FROM customer ORDER BY born, id FETCH FIRST 5 ROWS ONLY", ()),
    ("misc", "SELECT count(*) FROM (SELECT DISTINCT customer_id, status FROM orders) t", ()),
    ("misc", "SELECT 1 + 2, 'x' || 'y', NULL::integer, 2.5 * 4, true AND NULL", ()),
    (
        "misc",
        "SELECT id, status FROM orders WHERE status IN ('new', 'paid') AND id BETWEEN 5 AND 25 ORDER BY id",
        (),
    ),
    ("misc", "SELECT id FROM orders WHERE status IS DISTINCT FROM 'new' ORDER BY id", ()),
    ("misc", "SELECT id FROM customer WHERE vip IS UNKNOWN ORDER BY id", ()),
    ("misc", "SELECT sku, price FROM product ORDER BY 2 DESC, 1", ()),
    ("misc", "SELECT c.* FROM customer c WHERE c.id = %s", (3,)),
    ("misc", "SELECT * FROM item WHERE order_id = %s ORDER BY sku", (7,)),
    (
        "misc",
        "SELECT id, placed FROM orders WHERE placed BETWEEN %s AND %s ORDER BY placed, id",
        (dt.datetime(2024, 3, 1), dt.datetime(2024, 5, 1)),
    ),
    # choices between numeric scales, per row (CASE in case-27)
    (
        "misc",
        "SELECT order_id, sku, coalesce(discount, 0), qty * coalesce(discount, 1) FROM item ORDER BY 1, 2",
        (),
    ),
    # op ANY / ALL (subquery): NULLs among the values, empty sets, NOT, correlated, text
    (
        "sub",
        "SELECT sku FROM product WHERE weight > ALL (SELECT weight FROM product WHERE category = 'bath') ORDER BY sku",
        (),
    ),
    (
        "sub",
        "SELECT sku FROM product WHERE weight < ANY (SELECT weight FROM product WHERE category IS NULL) ORDER BY sku",
        (),
    ),
    (
        "sub",
        "SELECT sku, weight = ANY (SELECT weight FROM product WHERE price > 20) FROM product ORDER BY sku",
        (),
    ),
    (
        "sub",
        "SELECT sku, weight <> ALL (SELECT weight FROM product WHERE price > 20) FROM product ORDER BY sku",
        (),
    ),
    (
        "sub",
        "SELECT sku FROM product WHERE price > ALL (SELECT price FROM product WHERE category = 'none') ORDER BY sku",
        (),
    ),
    (
        "sub",
        "SELECT sku FROM product WHERE NOT price = ANY (SELECT price * 2 FROM product) ORDER BY sku",
        (),
    ),
    (
        "sub",
        "SELECT c.id FROM customer c WHERE c.credit >= ALL (SELECT d.credit FROM customer d WHERE d.region = c.region AND d.credit IS NOT NULL) ORDER BY c.id",
        (),
    ),
    (
        "sub",
        "SELECT id FROM customer WHERE name = ANY (SELECT lower(name) FROM customer) ORDER BY id",
        (),
    ),
    (
        "sub",
        "SELECT id FROM customer WHERE region = SOME (SELECT code FROM region WHERE label LIKE '%th') ORDER BY id",
        (),
    ),
    # LIKE with a parameter pattern: as it comes, or built around the value with ||
    ("like", "SELECT id FROM customer WHERE name LIKE %s ORDER BY id", ("bob",)),
    ("like", "SELECT id FROM customer WHERE email LIKE %s || '%%' ORDER BY id", ("ann",)),
    ("like", "SELECT sku FROM product WHERE title ILIKE '%%' || %s || '%%' ORDER BY sku", ("MUG",)),
    ("like", "SELECT sku FROM product WHERE title NOT LIKE %s ORDER BY sku", ("%_%",)),
    ("like", "SELECT sku, title || %s FROM product WHERE title LIKE %s ORDER BY sku", (7, "T%")),
    # functions PostgreSQL types or computes otherwise than the client engine
    ("fn", "SELECT id, reverse(name), reverse(region) FROM customer ORDER BY id", ()),
    (
        "fn",
        "SELECT id, sign(credit), sign(-id), ceil(credit), floor(credit), ceiling(credit) FROM customer ORDER BY id",
        (),
    ),
    (
        "fn",
        "SELECT sku, ceil(weight), floor(weight * 1.5), sign(weight::float8), ceil(weight::float8 / 4) FROM product ORDER BY sku",
        (),
    ),
    (
        "fn",
        "SELECT id, name::varchar(3), email::varchar(1), id::varchar(1), (id * 100)::varchar(2) FROM customer ORDER BY id",
        (),
    ),
    (
        "fn",
        "SELECT sku, weight::numeric, price::numeric, weight::numeric / 7, sum(weight::numeric) OVER () FROM product ORDER BY sku",
        (),
    ),
    (
        "fn",
        "SELECT category, sum(ceil(price)), max(reverse(title)) FROM product GROUP BY category ORDER BY category",
        (),
    ),
    # array_agg: arrays of integers, text under the collation, numerics, timestamps, booleans
    (
        "agg",
        "SELECT array_agg(name ORDER BY name), array_agg(name ORDER BY name DESC NULLS LAST) FROM customer",
        (),
    ),
    (
        "agg",
        "SELECT category, array_agg(price ORDER BY sku), array_agg(DISTINCT weight ORDER BY weight) FROM product GROUP BY category ORDER BY category",
        (),
    ),
    (
        "agg",
        "SELECT customer_id, array_agg(placed ORDER BY placed) FILTER (WHERE status <> 'new') FROM orders GROUP BY customer_id ORDER BY customer_id",
        (),
    ),
    (
        "agg",
        "SELECT array_agg(vip ORDER BY id), array_agg(born ORDER BY id) FROM customer WHERE id < 8",
        (),
    ),
    ("agg", "SELECT array_agg(id ORDER BY id) FROM customer WHERE id < 0", ()),
    (
        "agg",
        "SELECT id, array_agg(sku ORDER BY sku) OVER (ORDER BY id) FROM orders JOIN item ON item.order_id = orders.id WHERE id < 6 ORDER BY id, sku",
        (),
    ),
    # modulo of numerics, round() of doubles (half to even) and to negative scales
    (
        "expr",
        "SELECT sku, price % 3, price * 100 % 7, price % 0.3, -price % 2, mod(price, -2) FROM product ORDER BY sku",
        (),
    ),
    ("expr", "SELECT sku FROM product WHERE price * 100 % 100 > 50 ORDER BY sku", ()),
    ("expr", "SELECT id, credit % 0 FROM customer ORDER BY id", ()),
    (
        "fn",
        "SELECT sku, round(weight::float8 / 2), round(-weight::float8 / 4), round(price, -1), round(price * 37, -2) FROM product ORDER BY sku",
        (),
    ),
    # extract(epoch | second): numerics exact to the microsecond; date_part(): doubles
    (
        "fn",
        "SELECT id, extract(epoch FROM placed), extract(second FROM placed), date_part('epoch', placed), date_part('second', placed) FROM orders ORDER BY id",
        (),
    ),
    (
        "fn",
        "SELECT id, extract(epoch FROM born), date_part('epoch', born) FROM customer ORDER BY id",
        (),
    ),
    ("fn", "SELECT id FROM customer WHERE extract(hour FROM born) = 0 ORDER BY id", ()),
    (
        "expr",
        "SELECT status, max(extract(epoch FROM placed)) - min(extract(epoch FROM placed)) FROM orders GROUP BY status ORDER BY status",
        (),
    ),
    # || computed per row: under DISTINCT, ordered (by the collation), updated
    ("text", "SELECT DISTINCT status || 'x' FROM orders ORDER BY 1", ()),
    ("text", "SELECT DISTINCT status || note FROM orders ORDER BY 1 NULLS FIRST", ()),
    ("text", "SELECT id, name || '!' FROM customer ORDER BY 2, 1", ()),
    ("text", "SELECT id, %s || name FROM customer WHERE id < %s ORDER BY id", ("> ", 6)),
    # DISTINCT ON a constant keeps one row
    (
        "misc",
        "SELECT DISTINCT ON ((0 + 2.5)) (0 + 2.5), id FROM orders WHERE lower(status) <> 'x' ORDER BY (0 + 2.5), id",
        (),
    ),
    # a folded constant (1 + 1) is no position: it orders, groups and keeps nothing apart
    ("misc", "SELECT id, name FROM customer WHERE lower(name) <> 'x' ORDER BY 1 + 1, id", ()),
    (
        "misc",
        "SELECT DISTINCT ON ((1 + 1)) id FROM customer WHERE lower(name) <> 'x' ORDER BY 1 + 1, id",
        (),
    ),
    # ... nor a negative one (0 + -0.25 folds to -0.25): DISTINCT ON keeps one row
    (
        "misc",
        "SELECT DISTINCT ON ((0 + -0.25)) (0 + -0.25), id FROM customer WHERE lower(name) <> 'x' ORDER BY (0 + -0.25), id",
        (),
    ),
    (
        "misc",
        "SELECT 1 + 1 AS k, count(*) FROM customer WHERE lower(name) <> 'x' GROUP BY 1 + 1",
        (),
    ),
    # a choice of ceil()'s numeric: its scale is 0 (found by the split fuzz suite)
    (
        "fn",
        "SELECT id, coalesce(ceil(credit), id), coalesce(floor(credit), 0.5), coalesce(sign(credit), 2) FROM customer ORDER BY id",
        (),
    ),
    # an average from a CTE or derived table, only compared or ordered by: PostgreSQL's value
    (
        "cte",
        "WITH t AS (SELECT category, avg(price) AS a FROM product GROUP BY category) SELECT p.sku FROM product p JOIN t ON t.category = p.category WHERE p.price > t.a ORDER BY p.sku",
        (),
    ),
    (
        "cte",
        "SELECT sku FROM product p, (SELECT avg(price) AS a, avg(weight) AS w FROM product) s WHERE p.price * 3 > s.a * 4 OR p.weight < s.w ORDER BY sku",
        (),
    ),
    (
        "cte",
        "WITH t AS (SELECT customer_id, avg(qty) AS q FROM orders JOIN item ON item.order_id = orders.id GROUP BY customer_id) SELECT customer_id FROM t ORDER BY t.q DESC, customer_id NULLS FIRST",
        (),
    ),
    # greatest / least keep the chosen value's own display scale
    (
        "fn",
        "SELECT id, greatest(credit, 0.5, id), least(credit, NULL, 2.500), greatest(credit, 0) + 1 FROM customer ORDER BY id",
        (),
    ),
    (
        "fn",
        "SELECT sku, greatest(price, weight), least(price * 2, weight, 3.75) FROM product ORDER BY sku",
        (),
    ),
    # regular expressions both engines read alike (literals, ., anchors, groups, brackets)
    (
        "like",
        "SELECT id, name ~ '(ee|ob)$', email ~ '^[a-z]+[0-9]{1,2}@ex\\.org$' FROM customer ORDER BY id",
        (),
    ),
    (
        "like",
        "SELECT sku FROM product WHERE title ~ 'u.' AND title !~ '^[^a-z ]+$' ORDER BY sku",
        (),
    ),
    ("like", "SELECT id FROM customer WHERE name ~ 'Z[oö]|É' OR region ~ '^.O$' ORDER BY id", ()),
    # to_char of dates and timestamps, PostgreSQL's patterns
    (
        "fn",
        "SELECT id, to_char(placed, 'YYYY-MM-DD HH24:MI:SS'), to_char(placed, 'FMMonth DD, YYYY'), to_char(placed, 'Dy Mon HH12:MI am') FROM orders ORDER BY id",
        (),
    ),
    (
        "fn",
        "SELECT id, to_char(born, 'YYYY\"Q\"Q IW ID DDD D WW YY Y'), to_char(born, 'Day|DAY|day|MONTH|mon|FMDD/FMMM|FMHH12') FROM customer ORDER BY id",
        (),
    ),
    (
        "agg",
        "SELECT to_char(placed, 'YYYY-MM') AS m, count(*) FROM orders GROUP BY 1 ORDER BY 1",
        (),
    ),
    (
        "fn",
        "SELECT id, to_char(placed, ''), to_char(placed, 'HH24:MI:SS.MS.US P.M. a.m. \\Y') FROM orders WHERE id < 9 ORDER BY id",
        (),
    ),
]

QUERIES: list[Query] = (
    FUNCTIONS + CASES + AGGREGATES + WINDOWS + SETS + SUBQUERIES + CTES + LIKES + TEXT_ORDER
    + EXPRESSION_PREDICATES + JOINS + DISTINCT_LIMIT
)  # fmt: skip
