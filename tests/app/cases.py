"""The application suite's cases: what an application built on the blog schema sends.

Grouped by what they exercise; each is run on plain PostgreSQL and through the client
(harness.Pair.check).  A case marked with ``gap`` is a known refusal or difference the
suite expects, strictly, until it is closed.
"""

from __future__ import annotations

import datetime as dt

from .harness import Case

C = Case.of

READS = [
    C("pk", "SELECT * FROM author WHERE id = %s", (3,)),
    C("pk-miss", "SELECT * FROM author WHERE id = %s", (99,)),
    C("unique-email", "SELECT id, name FROM author WHERE email = %s", ("dee@example.org",)),
    C("order-name", "SELECT name FROM author ORDER BY name", ordered=True),
    C("order-desc-limit", "SELECT id, title FROM post ORDER BY id DESC LIMIT 5", ordered=True),
    C("limit-offset", "SELECT id FROM post ORDER BY id LIMIT %s OFFSET %s", (4, 3), ordered=True),
    C(
        "order-two-keys",
        "SELECT author_id, score, id FROM post ORDER BY author_id, score DESC, id",
        ordered=True,
    ),
    C(
        "order-nulls",
        "SELECT id, rating FROM comment ORDER BY rating NULLS FIRST, id",
        ordered=True,
    ),
    C("order-position", "SELECT title, score FROM post ORDER BY 2, 1", ordered=True),
    C("order-alias", "SELECT title AS t, score AS s FROM post ORDER BY s DESC, t", ordered=True),
    C("range-int", "SELECT id FROM post WHERE score > %s AND score <= %s", (0, 20)),
    C(
        "between",
        "SELECT id FROM post WHERE created BETWEEN %s AND %s",
        (dt.datetime(2024, 3, 1), dt.datetime(2024, 8, 1)),
    ),
    C("range-date", "SELECT name FROM author WHERE joined >= '2024-01-01'::date"),
    C("bool", "SELECT id FROM post WHERE published"),
    C("bool-not", "SELECT id FROM post WHERE NOT published"),
    C("bool-eq", "SELECT id FROM post WHERE published = %s", (False,)),
    C("is-null", "SELECT id FROM comment WHERE author_id IS NULL"),
    C("is-not-null", "SELECT count(*) FROM post WHERE body IS NOT NULL"),
    C("in-list", "SELECT id FROM tag WHERE label IN ('crypto', 'news', 'nope')"),
    C("not-in", "SELECT id FROM tag WHERE label NOT IN ('crypto', 'news')"),
    C("any-list", "SELECT id, title FROM post WHERE id = ANY(%s)", ([1, 5, 9, 100],)),
    C("any-text", "SELECT id FROM author WHERE email = ANY(%s)", (["ann@example.org", "x@y"],)),
    C("all-list", "SELECT id FROM tag WHERE id <> ALL(%s)", ([1, 2],)),
    C("or", "SELECT id FROM post WHERE author_id = 1 OR score < 0"),
    C("neq", "SELECT id FROM author WHERE name <> 'Ann Lee'"),
    C("count", "SELECT count(*) FROM comment"),
    C("count-distinct", "SELECT count(DISTINCT author_id) FROM comment"),
    C("count-col", "SELECT count(author_id) FROM comment"),
    C("min-max", "SELECT min(score), max(score) FROM post"),
    C("min-max-date", "SELECT min(joined), max(joined) FROM author"),
    C("sum", "SELECT sum(score) FROM post"),
    C("avg", "SELECT avg(karma) FROM author"),
    C(
        "group-count",
        "SELECT author_id, count(*) FROM post GROUP BY author_id ORDER BY author_id",
        ordered=True,
    ),
    C(
        "group-alias",
        "SELECT author_id AS a, count(*) AS n FROM post GROUP BY a ORDER BY a",
        ordered=True,
    ),
    C("group-having", "SELECT post_id, count(*) FROM comment GROUP BY post_id HAVING count(*) > 2"),
    C(
        "group-order-count",
        "SELECT tag_id, count(*) AS n FROM post_tag GROUP BY tag_id ORDER BY n DESC, tag_id",
        ordered=True,
    ),
    C("group-bool", "SELECT published, count(*) FROM post GROUP BY published"),
    C("distinct", "SELECT DISTINCT author_id FROM post"),
    C("distinct-order", "SELECT DISTINCT author_id FROM post ORDER BY author_id", ordered=True),
    C(
        "join-fk",
        "SELECT p.title, a.name FROM post p JOIN author a ON a.id = p.author_id WHERE p.id = %s",
        (4,),
    ),
    C(
        "join-comma",
        "SELECT p.id, a.email FROM post p, author a WHERE a.id = p.author_id AND a.karma > 5",
    ),
    C(
        "join-left",
        "SELECT c.id, a.name FROM comment c LEFT JOIN author a ON a.id = c.author_id WHERE c.post_id = 9",
    ),
    C(
        "join-three",
        "SELECT p.id, t.label FROM post p JOIN post_tag pt ON pt.post_id = p.id JOIN tag t ON t.id = pt.tag_id WHERE p.author_id = 2",
    ),
    C(
        "join-group",
        "SELECT a.name, count(p.id) FROM author a JOIN post p ON p.author_id = a.id GROUP BY a.name ORDER BY a.name",
        ordered=True,
    ),
    C(
        "join-order-limit",
        "SELECT p.title, a.name FROM post p JOIN author a ON a.id = p.author_id ORDER BY p.created DESC LIMIT 3",
        ordered=True,
    ),
    C("star-qualified", "SELECT t.* FROM tag t WHERE t.id = 2"),
    C("expr-select", "SELECT id, score * 2 + 1 FROM post WHERE id < 4"),
    C("param-select", "SELECT id, %s FROM tag WHERE id = 1", ("x",)),
    C("cast-param", "SELECT id FROM post WHERE id = %s::integer", ("7",)),
    C("for-update", "SELECT id, karma FROM author WHERE id = 2 FOR UPDATE"),
    C("view", "SELECT title FROM published_post WHERE score > 10"),
    C("fn-lower", "SELECT lower(name) FROM author ORDER BY 1", ordered=True),
    C("fn-length", "SELECT id, length(title) FROM post WHERE id < 5"),
    C("fn-coalesce", "SELECT id, coalesce(bio, '-') FROM author"),
    C("case", "SELECT id, CASE WHEN score > 10 THEN 'hot' ELSE 'cold' END AS band FROM post"),
    C(
        "group-expr-alias",
        "SELECT CASE WHEN score > 10 THEN 'hot' ELSE 'cold' END AS band, count(*) FROM post GROUP BY band ORDER BY band",
        ordered=True,
    ),
    C(
        "date-trunc",
        "SELECT date_trunc('month', created) AS m, count(*) FROM post GROUP BY m ORDER BY m",
        ordered=True,
    ),
    C("extract", "SELECT id FROM post WHERE extract(month FROM created) = 3"),
    C("like-prefix", "SELECT id FROM author WHERE email LIKE 'a%'"),
    C("like-infix", "SELECT id FROM post WHERE body LIKE '%word1%'"),
    C("ilike", "SELECT id FROM author WHERE name ILIKE '%lee%'"),
    C("text-range", "SELECT id FROM author WHERE name > 'C'"),
    C(
        "subquery-in",
        "SELECT title FROM post WHERE author_id IN (SELECT id FROM author WHERE karma > 10)",
    ),
    C(
        "subquery-exists",
        "SELECT a.name FROM author a WHERE EXISTS (SELECT 1 FROM post p WHERE p.author_id = a.id AND p.score > 30)",
    ),
    C(
        "subquery-scalar",
        "SELECT id, (SELECT count(*) FROM comment c WHERE c.post_id = p.id) FROM post p WHERE id < 4",
    ),
    C(
        "cte",
        "WITH top AS (SELECT author_id, max(score) AS m FROM post GROUP BY author_id) SELECT a.name, top.m FROM top JOIN author a ON a.id = top.author_id",
    ),
    C(
        "union",
        "SELECT author_id FROM post WHERE score > 30 UNION SELECT author_id FROM comment WHERE rating > 4",
    ),
    C("window", "SELECT id, row_number() OVER (PARTITION BY author_id ORDER BY created) FROM post"),
    C("where-expr", "SELECT id FROM post WHERE score + author_id > 20"),
    C("like-param", "SELECT id FROM author WHERE name LIKE %s", ("%a%",)),
    C("ilike-contains", "SELECT id FROM post WHERE title ILIKE '%%' || %s || '%%'", ("NUMBER 0",)),
    C(
        "recent",
        "SELECT id FROM post WHERE created > now() - interval '20 years' AND created <= now()",
    ),
    C("today", "SELECT count(*) FROM author WHERE joined <= CURRENT_DATE"),
    C(
        "any-subquery",
        "SELECT id FROM post WHERE score > ALL (SELECT score FROM post WHERE author_id = 1)",
    ),
]

INSERTS = [
    C("serial-default", "INSERT INTO author (email, name) VALUES ('new@x.org', 'New')"),
    C(
        "serial-returning",
        "INSERT INTO author (email, name) VALUES (%s, %s) RETURNING id, joined, karma",
        ("r@x.org", "Ret"),
    ),
    C(
        "serial-multi-returning",
        "INSERT INTO tag (label) VALUES ('a'), ('b'), ('c') RETURNING id, label",
    ),
    C(
        "identity-default",
        "INSERT INTO post (author_id, title) VALUES (1, 'fresh') RETURNING id, score, published",
    ),
    C(
        "identity-explicit",
        "INSERT INTO post (id, author_id, title) VALUES (1000, 2, 'explicit') RETURNING id",
    ),
    C(
        "bigserial",
        "INSERT INTO comment (post_id, body) VALUES (3, 'hi') RETURNING id, author_id, rating",
    ),
    C("default-now", "INSERT INTO post (author_id, title) VALUES (2, 'now') RETURNING created"),
    C(
        "default-keyword",
        "INSERT INTO post (author_id, title, score) VALUES (3, 'kw', DEFAULT) RETURNING score",
    ),
    C(
        "default-all-columns",
        "INSERT INTO author VALUES (DEFAULT, 'd@x.org', 'D', NULL, DEFAULT, DEFAULT) RETURNING *",
    ),
    C("returning-star", "INSERT INTO tag (label) VALUES ('zzz') RETURNING *"),
    C(
        "returning-expr",
        "INSERT INTO author (email, name, karma) VALUES ('e@x', 'E', 4) RETURNING karma * 10",
    ),
    C(
        "multi-row",
        "INSERT INTO comment (post_id, author_id, body, rating) VALUES (1, 1, 'a', 1.5), (2, NULL, 'b', NULL), (3, 2, 'c', 4.0)",
    ),
    C(
        "cast-bool-int",
        "INSERT INTO author (email, name, karma) VALUES (%s, %s, %s::integer) RETURNING karma",
        ("c@x", "C", True),
    ),
    C(
        "cast-date",
        "INSERT INTO author (email, name, joined) VALUES ('dd@x', 'DD', '2020-02-02'::date) RETURNING joined",
    ),
    C("not-null-violation", "INSERT INTO author (email) VALUES ('nn@x')"),
    C("unique-violation", "INSERT INTO author (email, name) VALUES ('ann@example.org', 'dup')"),
    C("unique-multi-violation", "INSERT INTO post (author_id, title) VALUES (2, 'Post number 01')"),
    C("pk-violation", "INSERT INTO post_tag VALUES (1, 2)"),
    C("fk-violation", "INSERT INTO post (author_id, title) VALUES (999, 'orphan')"),
    C(
        "fk-violation-null-ok",
        "INSERT INTO comment (post_id, author_id, body) VALUES (1, NULL, 'anon')",
    ),
    C("too-long", "INSERT INTO tag (label) VALUES (%s)", ("x" * 41,)),
    C(
        "on-conflict-nothing",
        "INSERT INTO tag (label) VALUES ('crypto') ON CONFLICT DO NOTHING RETURNING id",
    ),
    C(
        "on-conflict-key-nothing",
        "INSERT INTO author (email, name) VALUES ('bob@example.org', 'B2') ON CONFLICT (email) DO NOTHING",
    ),
    C(
        "on-conflict-update",
        "INSERT INTO author (email, name) VALUES ('bob@example.org', 'Bobby') ON CONFLICT (email) DO UPDATE SET name = EXCLUDED.name RETURNING id, name",
    ),
    C(
        "on-conflict-update-const",
        "INSERT INTO post_tag VALUES (2, 1) ON CONFLICT (post_id, tag_id) DO NOTHING",
    ),
    C(
        "on-conflict-pkey",
        "INSERT INTO tag (id, label) VALUES (1, 'pg') ON CONFLICT ON CONSTRAINT tag_pkey DO UPDATE SET label = EXCLUDED.label RETURNING *",
    ),
    C(
        "on-conflict-insert",
        "INSERT INTO tag (id, label) VALUES (77, 'seventy') ON CONFLICT (id) DO UPDATE SET label = EXCLUDED.label RETURNING *",
    ),
    C(
        "on-conflict-where",
        "INSERT INTO author (email, name) VALUES ('cid@example.org', 'X') ON CONFLICT (email) DO UPDATE SET name = EXCLUDED.name WHERE author.karma > 100 RETURNING name",
    ),
    C("insert-select", "INSERT INTO tag (label) SELECT name FROM author WHERE karma > 5"),
    C(
        "insert-select-returning",
        "INSERT INTO post_tag (post_id, tag_id) SELECT id, 5 FROM post WHERE author_id = 1 RETURNING *",
    ),
    C(
        "insert-select-violation",
        "INSERT INTO post_tag (post_id, tag_id) SELECT post_id, tag_id FROM post_tag WHERE post_id = 3",
    ),
    Case(
        "insert-then-read",
        [
            ("INSERT INTO author (email, name, karma) VALUES ('t@x', 'T', 9)", None),
            ("SELECT name, karma FROM author WHERE email = 't@x'", None),
        ],
    ),
    Case(
        "insert-post-then-join",
        [
            (
                "INSERT INTO post (author_id, title, score, published) VALUES (4, 'joined', 99, true)",
                None,
            ),
            (
                "SELECT a.name, p.title FROM post p JOIN author a ON a.id = p.author_id WHERE p.score = 99",
                None,
            ),
        ],
    ),
    Case(
        "serial-currval",
        [
            ("INSERT INTO tag (label) VALUES ('cv')", None),
            ("SELECT currval('tag_id_seq')", None),
        ],
    ),
    Case(
        "serial-lastval",
        [
            ("INSERT INTO author (email, name) VALUES ('lv@x', 'LV')", None),
            ("SELECT lastval()", None),
        ],
    ),
    C(
        "insert-now",
        "INSERT INTO event (kind, post_id, at) VALUES ('view', 1, now()) RETURNING kind",
    ),
    C(
        "insert-current-date",
        "INSERT INTO author (email, name, joined) VALUES ('cd@x', 'CD', CURRENT_DATE) RETURNING joined",
    ),
    C(
        "insert-expression-clock",
        "INSERT INTO comment (post_id, body, created) VALUES (%s, %s, CURRENT_TIMESTAMP) RETURNING post_id",
        (2, "now"),
    ),
]

UPDATES = [
    C("update-const", "UPDATE author SET bio = 'new bio' WHERE id = 2"),
    C(
        "update-returning",
        "UPDATE author SET name = %s WHERE email = %s RETURNING id, name",
        ("Ann L.", "ann@example.org"),
    ),
    C("update-increment", "UPDATE author SET karma = karma + 1 WHERE id = 1"),
    C(
        "update-increment-returning",
        "UPDATE post SET score = score + 5 WHERE author_id = 2 RETURNING id, score",
    ),
    C("update-many", "UPDATE post SET published = true WHERE score < 0"),
    C("update-none", "UPDATE post SET published = true WHERE id = -1"),
    C("update-null", "UPDATE comment SET rating = NULL WHERE post_id = 5"),
    C("update-default", "UPDATE author SET karma = DEFAULT WHERE id = 4 RETURNING karma"),
    C("update-unique-violation", "UPDATE author SET email = 'bob@example.org' WHERE id = 1"),
    C("update-fk-violation", "UPDATE post SET author_id = 404 WHERE id = 1"),
    C("update-not-null-violation", "UPDATE author SET name = NULL WHERE id = 1"),
    C("update-pk", "UPDATE tag SET id = 50 WHERE id = 5 RETURNING *"),
    C("update-pk-restricted", "UPDATE tag SET id = 60 WHERE id = 1"),
    C(
        "update-from",
        "UPDATE post SET published = false FROM author WHERE author.id = post.author_id AND author.karma = 0",
    ),
    C(
        "update-from-returning",
        "UPDATE comment c SET rating = 5.0 FROM post p WHERE p.id = c.post_id AND p.score > 30 RETURNING c.id, p.title",
    ),
    C("update-any", "UPDATE post SET score = 0 WHERE id = ANY(%s) RETURNING id", ([2, 4, 6],)),
    C("update-too-long", "UPDATE tag SET label = %s WHERE id = 1", ("y" * 50,)),
    Case(
        "update-then-read",
        [
            ("UPDATE author SET karma = 100 WHERE id = 3", None),
            ("SELECT name FROM author WHERE karma >= 100", None),
        ],
    ),
    Case(
        "rmw-twice",
        [
            ("UPDATE post SET score = score * 2 WHERE id = 3", None),
            ("UPDATE post SET score = score - 1 WHERE id = 3 RETURNING score", None),
        ],
    ),
    C("update-now", "UPDATE post SET created = now() WHERE id = 3 RETURNING id"),
    C(
        "update-concat",
        "UPDATE author SET bio = bio || %s WHERE id < 4 RETURNING id, bio",
        (" (edited)",),
    ),
    C(
        "update-prepend",
        "UPDATE post SET title = %s || title WHERE author_id = 2 RETURNING title",
        ("Re: ",),
    ),
    C(
        "update-coalesce",
        "UPDATE comment SET rating = coalesce(rating, 2.5) WHERE post_id < 4 RETURNING id, rating",
    ),
    C(
        "update-coalesce-concat",
        "UPDATE author SET bio = coalesce(bio, '') || %s WHERE id < 4 RETURNING id, bio",
        ("!",),
    ),
    C(
        "update-coalesce-arith",
        "UPDATE post SET score = coalesce(score, 0) * 2 + %s WHERE id < 5 RETURNING id, score",
        (1,),
    ),
]

DELETES = [
    C("delete-one", "DELETE FROM comment WHERE id = 3"),
    C("delete-returning", "DELETE FROM comment WHERE post_id = 4 RETURNING id, body"),
    C("delete-cascade", "DELETE FROM author WHERE id = 2"),
    C("delete-cascade-post", "DELETE FROM post WHERE id = 5 RETURNING title"),
    C("delete-set-null", "DELETE FROM author WHERE id = 3 RETURNING email"),
    C("delete-restrict", "DELETE FROM tag WHERE id = 2"),
    C("delete-unused-tag", "INSERT INTO tag (label) VALUES ('unused')"),
    C(
        "delete-using",
        "DELETE FROM post_tag pt USING tag t WHERE t.id = pt.tag_id AND t.label = 'news'",
    ),
    C(
        "delete-using-returning",
        "DELETE FROM comment c USING post p WHERE p.id = c.post_id AND p.author_id = 1 RETURNING c.id",
    ),
    C("delete-all", "DELETE FROM post_tag"),
    C("delete-any", "DELETE FROM comment WHERE id = ANY(%s)", ([1, 2, 3],)),
    C("delete-none", "DELETE FROM comment WHERE body = 'nothing like this'"),
    Case(
        "delete-then-count",
        [
            ("DELETE FROM post WHERE author_id = 1", None),
            ("SELECT count(*) FROM comment", None),
        ],
    ),
]

SCRIPTS = [
    C(
        "script-two-inserts",
        "INSERT INTO tag (label) VALUES ('s1'); INSERT INTO tag (label) VALUES ('s2')",
    ),
    C(
        "script-insert-select",
        "INSERT INTO tag (label) VALUES ('s3'); SELECT label FROM tag WHERE label = 's3'",
    ),
    C(
        "script-failing",
        "INSERT INTO tag (label) VALUES ('s4'); INSERT INTO tag (label) VALUES ('crypto')",
    ),
    C("script-params", "SELECT 1; SELECT %s", (1,)),
    Case(
        "savepoint-rollback",
        [
            ("INSERT INTO tag (label) VALUES ('kept')", None),
            ("SAVEPOINT inner_sp", None),
            ("INSERT INTO tag (label) VALUES ('gone')", None),
            ("ROLLBACK TO SAVEPOINT inner_sp", None),
            ("SELECT label FROM tag ORDER BY label", None),
        ],
        ordered=True,
    ),
    Case(
        "savepoint-release",
        [
            ("SAVEPOINT s2", None),
            ("UPDATE author SET karma = 1 WHERE id = 5", None),
            ("RELEASE SAVEPOINT s2", None),
            ("SELECT karma FROM author WHERE id = 5", None),
        ],
    ),
    Case(
        "savepoint-after-error",
        [
            ("SAVEPOINT s3", None),
            ("SELECT karma FROM author WHERE id = 5", None),
            ("ROLLBACK TO s3", None),
            ("SELECT count(*) FROM author", None),
        ],
    ),
    C("set-show", "SET LOCAL statement_timeout = '5s'"),
    C("show", "SHOW statement_timeout"),
]

SCHEMA_CHANGES = [
    Case(
        "alter-add-column",
        [
            ("ALTER TABLE author ADD COLUMN city text", None),
            ("UPDATE author SET city = 'Lyon' WHERE id = 1", None),
            ("SELECT name, city FROM author WHERE city = 'Lyon'", None),
        ],
    ),
    Case(
        "alter-add-column-default",
        [
            ("ALTER TABLE tag ADD COLUMN weight integer NOT NULL DEFAULT 1", None),
            ("SELECT label, weight FROM tag WHERE weight = 1", None),
        ],
    ),
    Case(
        "alter-drop-column",
        [
            ("ALTER TABLE author DROP COLUMN bio", None),
            ("SELECT * FROM author WHERE id = 1", None),
        ],
    ),
    Case(
        "alter-rename-column",
        [
            ("ALTER TABLE tag RENAME COLUMN label TO name", None),
            ("SELECT name FROM tag WHERE name = 'crypto'", None),
        ],
    ),
    Case(
        "alter-rename-table",
        [
            ("ALTER TABLE tag RENAME TO label", None),
            ("SELECT count(*) FROM label", None),
        ],
    ),
    Case(
        "alter-set-not-null",
        [
            ("ALTER TABLE author ALTER COLUMN bio SET NOT NULL", None),
        ],
    ),
    Case(
        "alter-drop-not-null",
        [
            ("ALTER TABLE post ALTER COLUMN body DROP NOT NULL", None),
            ("ALTER TABLE author ALTER COLUMN name DROP NOT NULL", None),
            ("INSERT INTO author (email) VALUES ('noname@x') RETURNING name", None),
        ],
    ),
    Case(
        "alter-set-default",
        [
            ("ALTER TABLE author ALTER COLUMN karma SET DEFAULT 5", None),
            ("INSERT INTO author (email, name) VALUES ('k5@x', 'K') RETURNING karma", None),
        ],
    ),
    Case(
        "alter-add-unique",
        [
            ("ALTER TABLE author ADD CONSTRAINT author_name_key UNIQUE (name)", None),
            ("INSERT INTO author (email, name) VALUES ('u@x', 'Ann Lee')", None),
        ],
    ),
    Case(
        "create-index",
        [
            ("CREATE INDEX ON comment (author_id)", None),
            ("SELECT count(*) FROM comment WHERE author_id = 2", None),
        ],
    ),
    Case(
        "truncate-cascade",
        [
            ("TRUNCATE post CASCADE", None),
            ("SELECT count(*) FROM comment", None),
        ],
    ),
    C("truncate-refused", "TRUNCATE author"),
    Case(
        "drop-table-cascade",
        [
            ("DROP TABLE post_tag", None),
            ("DROP TABLE tag", None),
        ],
    ),
    C("drop-table-referenced", "DROP TABLE author"),
    Case(
        "create-table-in-tx",
        [
            (
                "CREATE TABLE note (id serial PRIMARY KEY, post_id bigint REFERENCES post (id), txt text)",
                None,
            ),
            ("INSERT INTO note (post_id, txt) VALUES (1, 'n1'), (2, 'n2') RETURNING id", None),
            ("SELECT txt FROM note WHERE post_id = 2", None),
        ],
    ),
]

KEYS_AND_DEFAULTS = [
    C("identity-always-explicit", "INSERT INTO event (id, kind) VALUES (5, 'view')"),
    C(
        "identity-default",
        "INSERT INTO event (kind, post_id) VALUES ('like', 3) RETURNING id, kind, weight, at",
    ),
    C(
        "identity-default-keyword",
        "INSERT INTO event (id, kind) VALUES (DEFAULT, 'share') RETURNING id",
    ),
    C(
        "serial-default-keyword",
        "INSERT INTO tag (id, label) VALUES (DEFAULT, 'dflt') RETURNING id, label",
    ),
    C(
        "serial-multi-row",
        "INSERT INTO tag (label) VALUES ('m1'), ('m2'), ('m3') RETURNING id, label",
    ),
    C("serial-nextval", "SELECT nextval('author_id_seq')"),
    Case(
        "serial-setval",
        [
            ("SELECT setval('tag_id_seq', 100)", None),
            ("INSERT INTO tag (label) VALUES ('after setval') RETURNING id", None),
            ("SELECT currval('tag_id_seq'), lastval()", None),
        ],
    ),
    C("currval-unknown-sequence", "SELECT currval('no_such_seq')"),
    C(
        "default-now",
        "INSERT INTO comment (post_id, body) VALUES (2, 'now') RETURNING created, rating",
    ),
    C(
        "default-current-date",
        "INSERT INTO author (email, name) VALUES ('today@x', 'T') RETURNING joined, karma",
    ),
    Case(
        "default-now-same-in-transaction",
        [
            ("INSERT INTO comment (post_id, body) VALUES (2, 'a')", None),
            ("INSERT INTO comment (post_id, body) VALUES (3, 'b')", None),
            ("SELECT count(DISTINCT created) FROM comment WHERE body IN ('a', 'b')", None),
        ],
    ),
    C("check-in-violation", "INSERT INTO event (kind) VALUES ('nope')"),
    C("check-gt-violation", "INSERT INTO event (kind, weight) VALUES ('view', 0)"),
    C("check-between-violation", "UPDATE comment SET rating = 7 WHERE id = 1"),
    C("check-between-ok", "UPDATE comment SET rating = 5 WHERE id = 1 RETURNING rating"),
    C("check-null-ok", "INSERT INTO comment (post_id, body, rating) VALUES (1, 'unrated', NULL)"),
    Case(
        "fk-set-null-other-onions",
        [
            ("DELETE FROM post WHERE id = 3", None),
            ("SELECT count(*) FROM event WHERE post_id IS NULL", None),
            ("SELECT count(*) FROM event WHERE post_id > 0", None),
            (
                "SELECT post_id, count(*) FROM event GROUP BY post_id ORDER BY post_id NULLS FIRST",
                None,
            ),
        ],
        ordered=True,
    ),
    C(
        "fk-join-implied-group",
        "SELECT e.kind, p.title FROM event e JOIN post p ON p.id = e.post_id WHERE e.weight = 2",
    ),
    C("fk-insert-violation", "INSERT INTO event (kind, post_id) VALUES ('view', 12345)"),
    C("fk-cascade-two-levels", "DELETE FROM author WHERE id = 4 RETURNING id"),
]

VIEWS = [
    C("view-star", "SELECT * FROM published_post ORDER BY id", ordered=True),
    C(
        "view-join",
        "SELECT pp.title, a.name FROM published_post pp JOIN author a ON a.id = pp.author_id WHERE pp.score > 0",
    ),
    C(
        "view-aggregate",
        "SELECT author_id, count(*) FROM published_post GROUP BY author_id ORDER BY author_id",
        ordered=True,
    ),
    Case(
        "view-create-aggregate",
        [
            (
                "CREATE VIEW author_stats AS SELECT author_id, count(*) AS n, max(score) AS best FROM post GROUP BY author_id",
                None,
            ),
            ("SELECT * FROM author_stats WHERE n > 3 ORDER BY author_id", None),
        ],
        ordered=True,
    ),
    Case(
        "view-replace",
        [
            (
                "CREATE OR REPLACE VIEW published_post AS SELECT id, author_id, title, score FROM post WHERE published AND score > 0",
                None,
            ),
            ("SELECT count(*) FROM published_post", None),
        ],
    ),
    Case(
        "view-drop",
        [
            ("DROP VIEW published_post", None),
            ("SELECT count(*) FROM published_post", None),
        ],
    ),
    C("view-drop-missing", "DROP VIEW no_such_view"),
    C("drop-table-under-view", "DROP TABLE post"),
    Case(
        "drop-table-cascade-view",
        [
            ("DROP TABLE comment, post_tag, event", None),
            ("DROP TABLE post CASCADE", None),
            ("SELECT count(*) FROM author", None),
        ],
    ),
]

MORE_SCHEMA_CHANGES = [
    Case(
        "alter-type-bigint",
        [
            ("ALTER TABLE author ALTER COLUMN karma TYPE bigint", None),
            ("SELECT name, karma FROM author WHERE karma > 5 ORDER BY karma", None),
        ],
        ordered=True,
    ),
    Case(
        "alter-type-text-to-int-fails",
        [
            ("ALTER TABLE author ALTER COLUMN name TYPE integer USING name::integer", None),
        ],
    ),
    Case(
        "alter-add-fk",
        [
            ("ALTER TABLE post ADD COLUMN editor_id integer", None),
            ("UPDATE post SET editor_id = 1 WHERE id < 5", None),
            (
                "ALTER TABLE post ADD CONSTRAINT post_editor_fk FOREIGN KEY (editor_id) REFERENCES author (id)",
                None,
            ),
            ("SELECT p.title, a.name FROM post p JOIN author a ON a.id = p.editor_id", None),
        ],
    ),
    Case(
        "alter-add-fk-violation",
        [
            ("ALTER TABLE post ADD COLUMN editor_id integer", None),
            ("UPDATE post SET editor_id = 99 WHERE id = 2", None),
            (
                "ALTER TABLE post ADD CONSTRAINT post_editor_fk FOREIGN KEY (editor_id) REFERENCES author (id)",
                None,
            ),
        ],
    ),
    Case(
        "alter-drop-unique",
        [
            ("ALTER TABLE post DROP CONSTRAINT post_author_title_key", None),
            ("INSERT INTO post (author_id, title) VALUES (1, 'Post number 05') RETURNING id", None),
        ],
    ),
    Case(
        "alter-drop-fk",
        [
            ("ALTER TABLE post_tag DROP CONSTRAINT post_tag_tag_id_fkey", None),
            ("DELETE FROM tag WHERE id = 2", None),
        ],
    ),
    C("alter-drop-missing-constraint", "ALTER TABLE post DROP CONSTRAINT nope"),
    Case(
        "alter-drop-default",
        [
            ("ALTER TABLE author ALTER COLUMN joined DROP DEFAULT", None),
            ("INSERT INTO author (email, name) VALUES ('nd@x', 'ND')", None),
        ],
    ),
    Case(
        "alter-add-check",
        [
            ("ALTER TABLE post ADD CONSTRAINT score_floor CHECK (score >= -100)", None),
            ("INSERT INTO post (author_id, title, score) VALUES (1, 'low', -500)", None),
        ],
    ),
    C(
        "alter-add-check-existing-rows",
        "ALTER TABLE post ADD CONSTRAINT positive CHECK (score > 0)",
    ),
    Case(
        "alter-add-serial-column",
        [
            ("ALTER TABLE tag ADD COLUMN rank serial", None),
            ("SELECT label, rank FROM tag ORDER BY rank", None),
        ],
        ordered=True,
    ),
    Case(
        "truncate-restart-identity",
        [
            ("TRUNCATE event RESTART IDENTITY", None),
            ("INSERT INTO event (kind) VALUES ('view') RETURNING id", None),
        ],
    ),
]

ALL = (
    READS
    + INSERTS
    + UPDATES
    + DELETES
    + SCRIPTS
    + KEYS_AND_DEFAULTS
    + VIEWS
    + SCHEMA_CHANGES
    + MORE_SCHEMA_CHANGES
)
