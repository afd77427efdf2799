"""Running TPC-C: one OS process per client, warm-up, measured interval, results.

Each client process opens its own connection (psycopg for ``plain``, the adaptive
client otherwise), runs transactions back to back with the standard mix and no keying or
think time, retries a transaction on serialization failures, deadlocks and the client's
retryable errors (counted), and records -- during the measured interval only --
per-statement and per-transaction response times, client-side crypto time per
transaction type, and encryptions/decryptions per statement (OPE apart).
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing as mp
import queue as mp_queue
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from .load import FULL, Scale
from .rand import TpccRandom
from .transactions import MIX, Terminal, pick

WARMUP_ROUNDS = 5
PRIMING_ROUNDS = 3

CONFIGS = ("plain", "encrypted", "adaptive")
ISOLATION = {
    "read committed": psycopg.IsolationLevel.READ_COMMITTED,
    "repeatable read": psycopg.IsolationLevel.REPEATABLE_READ,
    "serializable": psycopg.IsolationLevel.SERIALIZABLE,
}


def config_file(config: str) -> str | None:
    if config == "plain":
        return None
    root = Path(__file__).resolve().parent.parent
    return str(root / "onion_config" / f"tpcc-{config}.toml")


# how the plain configuration's psycopg connections treat their prepared statements:
# ``psycopg``'s own rule (all dropped at every rollback) or ``kept`` across rollbacks, as
# the adaptive client keeps them (adaptive_client.dbapi.direct): the baseline without the
# re-preparing after each of TPC-C's serialization failures
PLAIN_STATEMENTS = ("psycopg", "kept")


def open_connection(
    config: str,
    dsn: str,
    master_key: str | None,
    isolation: str,
    plain_statements: str = "psycopg",
) -> Any:
    if config == "plain":
        conn: Any = psycopg.connect(dsn)
        if plain_statements == "kept":
            from adaptive_client.dbapi.direct import keep_statements_across_rollback

            if not keep_statements_across_rollback(conn):
                raise RuntimeError("this psycopg's statement cache cannot be replaced")
    else:
        import adaptive_client

        conn = adaptive_client.connect(dsn, master_key=master_key, config=config_file(config))
    conn.isolation_level = ISOLATION[isolation]
    return conn


@dataclass
class RunSpec:
    config: str
    dsn: str
    clients: int
    duration: float
    warmup: float
    warehouses: int
    isolation: str = "repeatable read"
    master_key: str | None = None
    scale: Scale = FULL
    seed: int = 1
    latency_ms: float = 0.0
    method: str = "none"
    prime: bool = True  # adaptive: drive the workload's peels before measuring
    plain_statements: str = "psycopg"  # plain: PLAIN_STATEMENTS
    # the server itself when ``dsn`` goes through the latency emulation: priming (setup,
    # not measured) and bookkeeping queries need not wait out the emulated round trips
    server_dsn: str | None = None


@dataclass
class ClientResult:
    committed: Counter[str] = field(default_factory=Counter)
    rolled_back: Counter[str] = field(default_factory=Counter)
    retries: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    txn_times: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    stmt_times: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    crypto: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    counts: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    # per client: seconds its connection took to open, and from the run's start to the end
    # of its first transaction (where a round that commits nothing had its clients)
    connect_s: list[float] = field(default_factory=list)
    first_done_s: list[float] = field(default_factory=list)

    def add(self, other: ClientResult) -> None:
        """``other``'s transactions, times and counts added to these."""
        for attr in ("committed", "rolled_back", "retries", "errors"):
            getattr(self, attr).update(getattr(other, attr))
        self.connect_s.extend(other.connect_s)
        self.first_done_s.extend(other.first_done_s)
        for k, v in other.txn_times.items():
            self.txn_times[k].extend(v)
        for k, v in other.stmt_times.items():
            self.stmt_times[k].extend(v)
        for k, c in other.crypto.items():
            self.crypto[k] += c
        for k, cnt in other.counts.items():
            self.counts[k].update(cnt)

    def throughput(self) -> int:
        """Transactions that count in tpm: the committed ones and the New-Orders the
        specification rolls back on purpose (1 %)."""
        return sum(self.committed.values()) + self.rolled_back["new_order"]


@dataclass
class Collected:
    """What the runs of one configuration measured, unsummarized: one run, or a point's
    rounds merged (:func:`merge`)."""

    spec: RunSpec
    total: ClientResult
    peels_warmup: int
    peels_measured: int
    # per run, in order: when it started (Unix time), measured seconds, transactions, tpm
    rounds: list[dict[str, float]]


def _retryable(exc: BaseException) -> bool:
    from adaptive_client.errors import RetryableError

    return isinstance(
        exc,
        RetryableError
        | psycopg.errors.SerializationFailure
        | psycopg.errors.DeadlockDetected
        | psycopg.errors.LockNotAvailable,
    )


def _client(index: int, spec: RunSpec, start_at: float, queue: Any) -> None:
    """One client process: its result always reaches the queue, a failure counted as an
    error (a process that died without it would hold the run until the queue's timeout)."""
    try:
        result = _terminal(index, spec, start_at)
    except Exception as exc:
        result = ClientResult()
        result.errors[f"client: {type(exc).__name__}: {exc}"] += 1
    queue.put(result)


def _terminal(index: int, spec: RunSpec, start_at: float) -> ClientResult:
    from adaptive_client.stats import STATS

    opening = time.time()
    conn = open_connection(
        spec.config, spec.dsn, spec.master_key, spec.isolation, spec.plain_statements
    )
    measure_from = start_at + spec.warmup
    end = measure_from + spec.duration
    result = ClientResult()
    result.connect_s.append(time.time() - opening)
    measuring = False

    @contextmanager
    def timer(label: str) -> Iterator[None]:
        # plain dict snapshots, compared key by key: Counter arithmetic per statement
        # cost the measured client (never plain psycopg) a tenth of its processor time
        enc, dec = dict(STATS.encryptions), dict(STATS.decryptions)
        t0 = time.perf_counter()
        try:
            yield
        finally:
            if measuring:
                result.stmt_times[label].append(time.perf_counter() - t0)
                c = result.counts[label]
                c["executions"] += 1
                # totals with OPE apart (the study's Table I) and per scheme (DET, RND, ...)
                for k, v in STATS.encryptions.items():
                    if d := v - enc.get(k, 0):
                        c["enc_ope" if k == "OPE" else "enc"] += d
                        c[f"enc:{k}"] += d
                for k, v in STATS.decryptions.items():
                    if d := v - dec.get(k, 0):
                        c["dec_ope" if k == "OPE" else "dec"] += d
                        c[f"dec:{k}"] += d

    term = Terminal(
        w_id=1 + index % spec.warehouses,
        warehouses=spec.warehouses,
        rand=TpccRandom(spec.seed * 1000 + index),
        scale=spec.scale,
        timer=timer,
    )
    while time.time() < start_at:
        time.sleep(0.005)
    # the warm-up starts with every transaction type a few times, so that on an adaptive
    # database it drives every peel the workload needs before measuring starts
    first = (
        [name for _ in range(WARMUP_ROUNDS) for name, _w in MIX]
        if spec.warmup > 0 and spec.prime
        else []
    )
    while (now := time.time()) < end:
        measuring = now >= measure_from
        name = first.pop(0) if first and not measuring else pick(term.rand)
        state = term.rand.rng.getstate()
        for _attempt in range(50):
            crypto0 = sum(STATS.crypto_seconds.values())
            t0 = time.perf_counter()
            try:
                ok = getattr(term, name)(conn)
            except Exception as exc:
                _rollback(conn)
                if _retryable(exc):
                    if measuring:
                        result.retries[name] += 1
                    term.rand.rng.setstate(state)  # same inputs on retry
                    continue
                result.errors[f"{name}: {type(exc).__name__}"] += 1
                if isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError):
                    conn = _reconnect(conn, spec, end)  # e.g. the server restarted
                break
            if measuring and time.time() <= end:
                (result.committed if ok else result.rolled_back)[name] += 1
                result.txn_times[name].append(time.perf_counter() - t0)
                result.crypto[name] += sum(STATS.crypto_seconds.values()) - crypto0
            break
        if not result.first_done_s:
            result.first_done_s.append(time.time() - start_at)
    conn.close()
    return result


def _reconnect(conn: Any, spec: RunSpec, until: float) -> Any:
    """A fresh connection (the old one may be half broken: the adaptive client holds
    two sessions), retried while the server is unreachable, until ``until``."""
    with contextlib.suppress(Exception):
        conn.close()
    while True:
        try:
            return open_connection(
                spec.config, spec.dsn, spec.master_key, spec.isolation, spec.plain_statements
            )
        except psycopg.OperationalError:
            if time.time() > until:
                raise
            time.sleep(0.2)


def _rollback(conn: Any) -> None:
    with contextlib.suppress(psycopg.Error):
        conn.rollback()


def peel_count(dsn: str) -> int:
    with psycopg.connect(dsn) as c:
        try:
            row = c.execute("SELECT count(*) FROM adaptive.peel_log").fetchone()
        except psycopg.errors.UndefinedTable:
            return 0
    return int(row[0]) if row else 0


def _pct(xs: list[float], p: float) -> float:
    if not xs:
        return 0.0
    s = sorted(xs)
    return s[min(len(s) - 1, round(p / 100 * (len(s) - 1)))]


def _summary(xs: list[float]) -> dict[str, float]:
    return {
        "count": len(xs),
        "mean_ms": 1000 * statistics.fmean(xs) if xs else 0.0,
        "std_ms": 1000 * statistics.stdev(xs) if len(xs) > 1 else 0.0,
        "p50_ms": 1000 * _pct(xs, 50),
        "p95_ms": 1000 * _pct(xs, 95),
        "p99_ms": 1000 * _pct(xs, 99),
    }


def prime(spec: RunSpec) -> None:
    """Warm-up, first part: every transaction type a few times from one connection, so
    an adaptive database is peeled to what the workload needs before clients start."""
    conn = open_connection(
        spec.config, spec.server_dsn or spec.dsn, spec.master_key, spec.isolation
    )
    term = Terminal(
        w_id=1, warehouses=spec.warehouses, rand=TpccRandom(spec.seed), scale=spec.scale
    )
    try:
        for name in [n for _ in range(PRIMING_ROUNDS) for n, _w in MIX]:
            for _attempt in range(50):
                try:
                    getattr(term, name)(conn)
                    break
                except Exception as exc:
                    _rollback(conn)
                    if not _retryable(exc):
                        raise
    finally:
        conn.close()


def run(spec: RunSpec, log: Any = print) -> dict[str, Any]:
    """One run of ``spec``: its clients' measurements, summarized."""
    return summarize(collect(spec, log))


def client_context() -> Any:
    """Where client processes come from: a fork server, which imported the client once.
    Not forks of this process: a sweep's process holds the results of every point run so
    far (hundreds of MB by its last points), and 64 children filling the free slots of that
    heap copied most of its pages each -- a ``make demo`` ran out of the machine's 24 GiB
    at its 120 ms point and had its processes killed."""
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["tpcc.driver", "adaptive_client"])
    return ctx


def _results(procs: list[Any], queue: Any, deadline: float) -> list[ClientResult]:
    """Every client's result; a client that died without one (killed) counts as an error
    at once, rather than holding the round until the deadline."""
    results: list[ClientResult] = []
    while len(results) < len(procs):
        try:
            results.append(queue.get(timeout=1.0))
            continue
        except mp_queue.Empty:
            pass
        dead = [p for p in procs if p.exitcode not in (None, 0)]
        if len(results) + len(dead) >= len(procs) or time.time() > deadline:
            with contextlib.suppress(mp_queue.Empty):  # (a last result in flight)
                while len(results) < len(procs):
                    results.append(queue.get(timeout=1.0))
            for p in dead[: len(procs) - len(results)]:
                lost = ClientResult()
                lost.errors[f"client: died (exit code {p.exitcode})"] += 1
                results.append(lost)
            if len(results) < len(procs):
                raise TimeoutError(f"{len(procs) - len(results)} clients never reported")
    for p in procs:
        p.join()
    return results


def collect(spec: RunSpec, log: Any = print) -> Collected:
    """One run of ``spec``: warm-up and measured interval, every client's measurements."""
    ctx = client_context()
    queue = ctx.Queue()
    peels0 = peel_count(spec.server_dsn or spec.dsn) if spec.config != "plain" else 0
    if spec.warmup > 0 and spec.config == "adaptive" and spec.prime:
        t0 = time.perf_counter()
        prime(spec)
        log(
            f"priming: {peel_count(spec.server_dsn or spec.dsn) - peels0} peels in {time.perf_counter() - t0:.1f} s"
        )
    start_at = time.time() + 1.0
    procs = [
        ctx.Process(target=_client, args=(i, spec, start_at, queue)) for i in range(spec.clients)
    ]
    for p in procs:
        p.start()
    peels_warm = peels0
    if spec.warmup > 0 and spec.config != "plain":
        time.sleep(max(0.0, start_at + spec.warmup - time.time()))
        peels_warm = peel_count(spec.server_dsn or spec.dsn)
        log(f"warm-up done: {peels_warm - peels0} peels")
    results = _results(procs, queue, time.time() + spec.warmup + spec.duration + 600)
    peels_end = peel_count(spec.server_dsn or spec.dsn) if spec.config != "plain" else 0
    total = ClientResult()
    for r in results:
        total.add(r)
    n = total.throughput()
    return Collected(
        spec=spec,
        total=total,
        peels_warmup=peels_warm - peels0,
        peels_measured=peels_end - peels_warm,
        rounds=[
            {
                "started": start_at + spec.warmup,
                "duration_s": spec.duration,
                "transactions": n,
                "tpm": n / (spec.duration / 60.0),
                # where a round's clients were, should it commit little or nothing
                "slowest_connect_s": round(max(total.connect_s, default=0.0), 3),
                "last_first_transaction_s": round(max(total.first_done_s, default=0.0), 3),
                "clients_without_commits": sum(1 for r in results if r.throughput() == 0),
            }
        ],
    )


def merge(parts: list[Collected]) -> Collected:
    """The rounds of one configuration at one point as one measurement: their
    transactions, times and peels added, over their measured seconds added."""
    total = ClientResult()
    for part in parts:
        total.add(part.total)
    return Collected(
        spec=parts[0].spec,
        total=total,
        peels_warmup=sum(p.peels_warmup for p in parts),
        peels_measured=sum(p.peels_measured for p in parts),
        rounds=[r for p in parts for r in p.rounds],
    )


def summarize(measured: Collected) -> dict[str, Any]:
    """The result of a run (or of merged rounds), as a point's JSON holds it."""
    spec, total = measured.spec, measured.total
    duration = sum(r["duration_s"] for r in measured.rounds)
    minutes = duration / 60.0
    return {
        "config": spec.config,
        "clients": spec.clients,
        "duration_s": duration,
        "warmup_s": spec.warmup,
        "warehouses": spec.warehouses,
        "isolation": spec.isolation,
        "plain_statements": spec.plain_statements if spec.config == "plain" else None,
        "latency_ms": spec.latency_ms,
        "latency_method": spec.method,
        "scale": vars(spec.scale),
        "tpm": total.throughput() / minutes,
        "tpmC": (total.committed["new_order"] + total.rolled_back["new_order"]) / minutes,
        "committed": dict(total.committed),
        "rolled_back": dict(total.rolled_back),
        "retries": dict(total.retries),
        "errors": dict(total.errors),
        "peels": {"warmup": measured.peels_warmup, "measured": measured.peels_measured},
        "rounds": measured.rounds,
        "transactions": {
            k: {**_summary(v), "crypto_ms_mean": 1000 * total.crypto[k] / max(1, len(v))}
            for k, v in sorted(total.txn_times.items())
        },
        "statements": {k: _summary(v) for k, v in sorted(total.stmt_times.items())},
        "table1": {
            k: {
                m: c[m] / max(1, c["executions"])
                for m in sorted({"enc", "enc_ope", "dec", "dec_ope", *c} - {"executions"})
            }
            for k, c in sorted(total.counts.items())
        },
    }


def variant(result: dict[str, Any]) -> str:
    """What a result is filed and compared under: its configuration, or ``plain-kept``
    for the second plain baseline a sweep runs beside plain (``--kept-latencies``)."""
    return str(result.get("variant") or result["config"])


def write_results(result: dict[str, Any], out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    stem = f"{variant(result)}-c{result['clients']}-l{int(result['latency_ms'])}"
    path = out / f"{stem}.json"
    with (out / f"{stem}-statements.csv").open("w") as f:
        f.write("statement,count,mean_ms,p50_ms,p95_ms,p99_ms,enc,enc_ope,dec,dec_ope\n")
        for k, s in result["statements"].items():
            t = result["table1"].get(k, {})
            f.write(
                f"{k},{s['count']},{s['mean_ms']:.3f},{s['p50_ms']:.3f},{s['p95_ms']:.3f},"
                f"{s['p99_ms']:.3f},{t.get('enc', 0):.2f},{t.get('enc_ope', 0):.2f},"
                f"{t.get('dec', 0):.2f},{t.get('dec_ope', 0):.2f}\n"
            )
    # the point's JSON last, whole or not at all: a resumed sweep counts it as done
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=2, default=str))
    tmp.replace(path)
    return path
