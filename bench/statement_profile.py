"""Where the client's CPU goes per TPC-C statement: a sampled profile per statement label.

    python bench/statement_profile.py [--labels no.item,pay.customer] [--n 3000]
                                      [--config encrypted] [--scale tiny] [--warehouses 1]
                                      [--rounds 3] [--rate 2000] [--detail 0] [--keep DIR]

For plain psycopg and the client (``--config``), a worker process runs, for each TPC-C
transaction holding a selected label, that transaction in a loop (against the databases
a sweep left, as ``tpcc_statement_cpu.py``, or ``--dsn``/``--plain-dsn``; Delivery fed by
NewOrders run apart, so that it finds orders to deliver) until each selected label has
run ``--n`` times after a warm-up.  Each statement is timed (the thread's CPU time, and
``getrusage``'s user and system parts of it) in ``--rounds`` runs per configuration
taking turns, without a profiler: the median per label is its CPU per execution.  One
more run per configuration goes under the sampling profiler py-spy (``--gil``: samples
of the thread holding the GIL; ``--native``: with the C frames, a system call among
them).

A statement's system (kernel) time is libpq's: sending to, polling and reading its
socket.  Its user time is split among the categories as its samples are, those in a
system call left out (the kernel's, counted already).  A sample is given to the
statement whose call in ``tpcc/transactions.py`` is on its stack (the calls' lines, read
from that file), and to a category by the innermost of its frames that :data:`RULES`
names -- a module, a function, or the source line a Python frame is on (a C call such as
a ``ContextVar.get`` or psycopg's Transformer has no Python frame of its own) -- else
``other``.  Printed: per label a table of the categories in µs per execution, the
client's and plain psycopg's side by side (plain's work is psycopg's: its libpq calls,
its cursor's statement cache and binding, its result loading), then a summary of all
labels.  ``--detail K`` adds the K frames that decided each category most often;
``--keep DIR`` keeps the raw samples (flamegraph.pl's input).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib.util
import inspect
import json
import linecache
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from tpcc_client_cpu import _dsn

from tpcc.cli import _exists, _recreate, master_key
from tpcc.driver import _retryable, open_connection
from tpcc.load import SCALES
from tpcc.rand import TpccRandom
from tpcc.transactions import MIX, Terminal

ROOT = Path(__file__).resolve().parent.parent

CATEGORIES = (
    "cache lookups",
    "binding and encoding",
    "encryption",
    "libpq calls and waiting",
    "result loading",
    "decryption and decoding",
    "statistics",
    "context variables",
    "catalog checks",
    "compilation",
    "client evaluation",
    "garbage collection",
    "other",
)
SHORT = {  # summary column headings
    "cache lookups": "cache",
    "binding and encoding": "bind",
    "encryption": "enc",
    "libpq calls and waiting": "libpq",
    "result loading": "load",
    "decryption and decoding": "dec",
    "statistics": "stats",
    "context variables": "ctxvar",
    "catalog checks": "catalog",
    "compilation": "compile",
    "client evaluation": "engine",
    "garbage collection": "gc",
    "other": "other",
}
LIBPQ = "libpq calls and waiting"


@dataclass(frozen=True)
class Rule:
    """A frame this names is counted in ``category``: its file (a path's tail) matches
    ``file``, its function ``function``, and the source line it is on ``line`` (a call
    into C made on that line: it has no frame of its own)."""

    category: str
    file: str
    function: str = ""
    line: str = ""


# Innermost frame first: the first frame any rule names gives the sample's category, the
# rules tried in this order for each frame.  "crypto" is resolved by direction: under a
# frame of the result's decoding it is decryption, else encryption.  Modules are named by
# their package paths and functions by what they do, so that a rewritten statement path
# still falls in its categories; what no rule names is "other".
RULES: tuple[Rule, ...] = (
    # the interpreter's collector, run by an allocation of the statement's
    Rule("garbage collection", r"libpython", r"^gc_collect|collect_main|collect_with_callback"),
    # encryption schemes (the native ones are called from these)
    Rule("crypto", r"adaptive_client/schemes/"),
    Rule("crypto", r"cryptography/"),
    # statistics: the counters, bound per connection
    Rule("statistics", r"adaptive_client/stats\.py"),
    Rule("statistics", r"adaptive_client/", "", r"\bSTATS\b|\bbind_stats\(|crypto_time"),
    # context variables read or set (module-level ContextVars are named in capitals)
    Rule("context variables", r"adaptive_client/", "", r"\b_?[A-Z][A-Z0-9_]+\.(set|get|reset)\("),
    Rule("context variables", r"adaptive_client/", r"^(next_bind|current_runtime)$"),
    # catalog checks: the connection bound, other clients' peels and DDL, the epoch
    Rule("catalog checks", r"adaptive_client/dbapi/", r"^bind$"),
    Rule(
        "catalog checks",
        r"adaptive_client/",
        r"^(refresh_catalog|epoch_moved|arrived|refresh|reload|in_transaction|"
        r"snapshot_isolation|committed|rolled_back|_check_text_orders)$",
    ),
    Rule("catalog checks", r"adaptive_client/dbapi/notifications\.py"),
    # libpq: the calls into it and psycopg's wait loop (its socket I/O is the kernel's
    # time, counted here too: see Profile)
    Rule(LIBPQ, r"psycopg/(generators|waiting|_pipeline)\.py"),
    Rule(LIBPQ, r"psycopg/pq/"),
    Rule(LIBPQ, r"psycopg/connection\.py", r"^wait$"),
    Rule(
        LIBPQ,
        r"adaptive_client/|psycopg/",
        "",
        r"send_query|\bwait\(|generators\.|pipeline_sync|_pipeline_mode\(|_next_result\("
        r"|_through_sync\(|\.flush\(|consume_input|get_result|\bpgconn\.\w+"
        r"|\bres\.(status|ntuples|command_tuples)\b|\bstatus in\b",
    ),
    # result loading: psycopg's Transformer (C: the lines calling it), its rows, columns;
    # the client's cursor handing its rows over
    Rule("result loading", r"psycopg/(_transformer|_py_transformer|types/|rows|_column)"),
    Rule("result loading", r"psycopg/", r"^(fetch\w*|description|_make_row\w*)$"),
    Rule("result loading", r"adaptive_client/dbapi/cursor\.py", r"^fetch(one|many|all)$"),
    Rule("result loading", r"adaptive_client/|psycopg/", "", r"load_rows?\(|set_pgresult\("),
    # caches: psycopg's prepared statements; the client's parsed texts, compiled kinds,
    # plans, rows locked in the transaction, its direct path's statement names
    Rule("cache lookups", r"psycopg/_preparing\.py"),
    Rule("cache lookups", r"psycopg/", r"_get_prepared|_maybe_prepare"),
    Rule(
        "cache lookups",
        r"adaptive_client/",
        r"^(parse|parsed_before|compiled_kind|remember_compiled_kind|prepare|compile|"
        r"cache_key|for_params|forget|forget_table|lock_key|\w*locked\w*)$",
    ),
    Rule("cache lookups", r"adaptive_client/compile/row_keys\.py"),
    Rule(
        "cache lookups",
        r"adaptive_client/",
        "",
        r"\b_?(plans|parsed|compiled_kind|formats|names)\.get\(|locked_rows|lock_layout",
    ),
    # compilation (a plan not cached: compiled per execution)
    Rule(
        "compilation",
        r"adaptive_client/",
        r"^(compile_statement|parse_sql|normalize_placeholders|split_statements)$",
    ),
    # the client's evaluation of what the server cannot compute over ciphertexts (a
    # read-modify-write's new values, a client-side aggregate)
    Rule("client evaluation", r"adaptive_client/engine/"),
    Rule(
        "client evaluation", r"adaptive_client/compile/(projection|client_aggregate|residual)\.py"
    ),
    # psycopg: the query and its parameters dumped
    Rule("binding and encoding", r"psycopg/(_queries|adapt)\.py"),
    Rule("binding and encoding", r"psycopg/", r"dump|_convert_query"),
    Rule("binding and encoding", r"adaptive_client/|psycopg/", "", r"dump_sequence\(|\.dump\("),
    # the result's decryption and decoding into the application's values
    Rule("decoding", r"adaptive_client/", r"decrypt|decode|^open|application_rows|from_server"),
    Rule("decoding", r"adaptive_client/", r"^(set_result|_as_lists|\w*columnar\w*)$"),
    Rule("decoding", r"adaptive_client/values/handout\.py"),
    # parameters checked, bound and encoded (their encryption apart, by the rule above)
    Rule(
        "binding and encoding",
        r"adaptive_client/",
        r"bind|seal|encode|encrypt|_values|_check_positional_count",
    ),
    Rule("binding and encoding", r"adaptive_client/compile/comparands\.py"),
    # (an encoding's or a recipe's functions serve both ways: the frame outside them that
    # binds or decrypts decides)
)

_FRAME = re.compile(r"^(?P<name>.*?) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")


@dataclass(frozen=True)
class Frame:
    name: str
    file: str
    line: int  # 0: a native frame

    @property
    def source(self) -> str:
        return linecache.getline(self.file, self.line).strip() if self.line else ""


def parse_frame(text: str) -> Frame:
    """A frame of py-spy's raw output: ``Class.function (file:line)``, or a native
    ``symbol (library)``; the function's name is kept without its class."""
    m = _FRAME.match(text)
    if m is None:
        return Frame(text, "", 0)
    line = int(m["line"] or 0)
    return Frame(m["name"].rpartition(".")[2] if line else m["name"], m["file"], line)


_COMPILED = [(r, re.compile(r.file), re.compile(r.function), re.compile(r.line)) for r in RULES]


def rule_for(frame: Frame) -> str | None:
    """The category the first rule naming ``frame`` gives, if any does."""
    source: str | None = None
    for rule, file_re, function_re, line_re in _COMPILED:
        if not file_re.search(frame.file):
            continue
        if rule.function and not function_re.search(frame.name):
            continue
        if rule.line:
            if not frame.line:
                continue
            if source is None:
                source = frame.source
            if not line_re.search(source):
                continue
        return rule.category
    return None


def categorise(frames: Sequence[Frame]) -> tuple[str, Frame | None]:
    """The category of a statement's sample (``frames`` outermost first, from the
    statement's call down) and the frame that decided it."""
    for i in range(len(frames) - 1, -1, -1):
        category = rule_for(frames[i])
        if category is None:
            continue
        if category == "crypto":
            outer = (rule_for(f) for f in frames[:i])
            category = (
                "decryption and decoding"
                if any(c == "decoding" for c in outer)
                or any("decrypt" in f.name for f in frames[:i])
                else "encryption"
            )
        elif category == "decoding":
            category = "decryption and decoding"
        return category, frames[i]
    return "other", None


# -- the statements' labels, read from the transactions' source -----------------------------
def label_lines() -> dict[tuple[str, int], str]:
    """(method, line) -> label: every line of each ``self.q(cur, "label", ...)`` or
    ``self._customer_by_name(..., "label")`` call in a Terminal method."""
    source = inspect.getsource(sys.modules[Terminal.__module__])
    out: dict[tuple[str, int], str] = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef):
            continue
        for call in ast.walk(node):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
                continue
            labels = [
                a.value
                for a in call.args
                if isinstance(a, ast.Constant) and isinstance(a.value, str) and "." in a.value
            ]
            if len(labels) != 1 or " " in labels[0]:
                continue
            for line in range(call.lineno, (call.end_lineno or call.lineno) + 1):
                out[(node.name, line)] = labels[0]
    return out


def transaction_of(label: str) -> str:
    """The Terminal method whose statements the label is among."""
    for (method, _), known in LABEL_LINES.items():
        if known == label:
            return method
    raise SystemExit(f"unknown statement label {label!r}; known: {', '.join(ALL_LABELS)}")


LABEL_LINES = label_lines()
ALL_LABELS = sorted(set(LABEL_LINES.values()), key=list(LABEL_LINES.values()).index)
TRANSACTIONS_FILE = "/".join(
    Path(inspect.getsourcefile(Terminal) or "tpcc/transactions.py").parts[-2:]
)


STATEMENT_CALLS = frozenset({"q", "_customer_by_name"})


# -- the worker: one configuration's transactions, under the profiler ---------------------
class Recorder:
    """The Terminal's timer: each statement's process time, and the user and system
    (kernel) parts of it, per label, while on."""

    def __init__(self) -> None:
        self.on = False
        self.cpu: dict[str, float] = defaultdict(float)
        self.user: dict[str, float] = defaultdict(float)
        self.system: dict[str, float] = defaultdict(float)
        self.runs: Counter[str] = Counter()
        self.transactions: Counter[str] = Counter()  # measured, per Terminal method
        self._label = ""
        self._t0 = 0.0
        self._usage = resource.getrusage(resource.RUSAGE_THREAD)

    def __call__(self, label: str) -> Recorder:
        self._label = label
        return self

    def __enter__(self) -> None:
        self._usage = resource.getrusage(resource.RUSAGE_THREAD)
        self._t0 = time.thread_time()

    def __exit__(self, *exc: object) -> None:
        t1 = time.thread_time()
        if self.on and exc[0] is None:
            usage, label = resource.getrusage(resource.RUSAGE_THREAD), self._label
            self.cpu[label] += t1 - self._t0
            self.user[label] += usage.ru_utime - self._usage.ru_utime
            self.system[label] += usage.ru_stime - self._usage.ru_stime
            self.runs[label] += 1

    def results(self) -> dict[str, Any]:
        return {
            "cpu": self.cpu,
            "user": self.user,
            "system": self.system,
            "runs": self.runs,
            "transactions": self.transactions,
        }


FEED = {"delivery": 10}  # NewOrders run before each Delivery: orders for it to deliver


def _run_transaction(term: Terminal, conn: Any, method: str) -> None:
    for _attempt in range(50):
        state = term.rand.rng.getstate()
        try:
            getattr(term, method)(conn)
            return
        except Exception as exc:
            with contextlib.suppress(Exception):
                conn.rollback()
            if not _retryable(exc):
                raise
            term.rand.rng.setstate(state)


def _feed(term: Terminal, conn: Any, method: str, rec: Recorder) -> None:
    on, rec.on = rec.on, False
    for _ in range(FEED.get(method, 0)):
        _run_transaction(term, conn, "new_order")
    rec.on = on


def _warm_up(
    term: Terminal, conn: Any, method: str, labels: list[str], executions: int, limit: float
) -> None:
    """Run the transaction until each label has run ``executions`` times: plans compiled,
    statements prepared (a label on a rare branch takes many transactions)."""
    measuring, warm = term.timer, Recorder()
    term.timer, warm.on = warm, True
    end = time.monotonic() + limit
    while min(warm.runs[label] for label in labels) < executions and time.monotonic() < end:
        _feed(term, conn, method, warm)
        _run_transaction(term, conn, method)
    term.timer = measuring


def _measure(
    term: Terminal, conn: Any, method: str, labels: list[str], rec: Recorder, n: int, limit: float
) -> None:
    end = time.monotonic() + limit
    rec.on = True
    while min(rec.runs[label] for label in labels) < n and time.monotonic() < end:
        _feed(term, conn, method, rec)
        _run_transaction(term, conn, method)
        rec.transactions[method] += 1
    rec.on = False


def worker(args: argparse.Namespace) -> None:
    conn = open_connection(args.worker, args.worker_dsn, master_key(), "repeatable read", "kept")
    rec = Recorder()
    term = Terminal(
        w_id=1,
        warehouses=args.warehouses,
        rand=TpccRandom(11),
        scale=SCALES[args.scale],
        timer=rec,
    )
    by_method: dict[str, list[str]] = defaultdict(list)
    for label in args.labels.split(","):
        by_method[transaction_of(label)].append(label)
    for method, labels in by_method.items():
        _warm_up(term, conn, method, labels, args.warmup, args.limit)
        _measure(term, conn, method, labels, rec, args.n, args.limit)
    conn.close()
    Path(args.out).write_text(json.dumps(rec.results()))


# -- the profile: samples read back ------------------------------------------------------
@dataclass
class Profile:
    """One configuration's statements: their CPU per label and its kernel part, timed in
    runs without the profiler, and a profiled run's samples per (label, category).

    The samples are of the thread while it holds the GIL (py-spy's ``--gil``): a Python
    frame running, or a C call made with the GIL held -- a system call among them (libpq
    sending with the GIL held), left out by :func:`read_samples`.  psycopg waits for the
    server without the GIL.  The split: the statement's system (kernel) time is libpq's
    -- sending, polling and reading its socket -- and its user time is divided among the
    categories as the samples are."""

    each: dict[str, float]  # CPU µs per execution (the median of the timed rounds)
    runs: dict[str, int]  # executions per round
    transactions: dict[str, int] = field(default_factory=dict)  # per round, per method
    user: dict[str, float] = field(default_factory=dict)  # seconds, all rounds
    system: dict[str, float] = field(default_factory=dict)
    samples: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    # per (label, category): the deciding frame (or the innermost), by samples
    where: dict[tuple[str, str], Counter[str]] = field(default_factory=lambda: defaultdict(Counter))

    def us(self, label: str) -> float:
        """CPU µs per execution."""
        return self.each.get(label, 0.0)

    def per_mix_transaction(self, label: str) -> float:
        """The label's executions per transaction of the TPC-C mix (its transaction's
        weight in the mix, times its executions per such transaction here)."""
        method = transaction_of(label)
        weight = dict(MIX)[method] / sum(w for _, w in MIX)
        done = self.transactions.get(method, 0)
        return weight * self.runs.get(label, 0) / done if done else 0.0

    def kernel_share(self, label: str) -> float:
        """The part of the label's CPU the kernel spent (getrusage's split)."""
        user, system = self.user.get(label, 0.0), self.system.get(label, 0.0)
        return system / (user + system) if user + system else 0.0

    def sample_us(self, label: str, samples: int) -> float:
        """What ``samples`` of the label's are in user-space µs per execution."""
        total = sum(self.samples.get(label, Counter()).values())
        user_us = self.us(label) * (1 - self.kernel_share(label))
        return user_us * samples / total if total else 0.0

    def split(self, label: str) -> dict[str, float]:
        """µs per execution in each category, summing to :meth:`us`."""
        counts = self.samples.get(label, Counter())
        each = {c: self.sample_us(label, counts[c]) for c in CATEGORIES}
        each[LIBPQ] += self.us(label) * self.kernel_share(label)
        if not sum(counts.values()):
            each["other"] += self.us(label) * (1 - self.kernel_share(label))
        return each


# a sample in one of these C library calls is in the kernel (a system call), whose time
# the statement's system time counts
SYSTEM_CALL = re.compile(
    r"^(__libc_)?(send|recv|sendto|recvfrom|sendmsg|recvmsg|poll|ppoll|select|pselect|"
    r"epoll_wait|read|write|mmap64|munmap|mprotect|madvise|brk|futex|syscall)$"
)


def read_samples(raw: str, profile: Profile) -> None:
    """Give each sample of the measured statements to its label and category."""
    here = str(Path(__file__).resolve().name)
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = [parse_frame(f) for f in stack.split(";")]
        if "libc" in frames[-1].file and SYSTEM_CALL.match(frames[-1].name):
            continue
        names = {f.name for f in frames if f.file.endswith(here)}
        if "_measure" not in names or "_feed" in names or "_warm_up" in names:
            continue
        at = next(
            (
                i
                for i, f in enumerate(frames)
                if f.file.endswith(TRANSACTIONS_FILE) and (f.name, f.line) in LABEL_LINES
            ),
            None,
        )
        if at is None:
            continue
        label = LABEL_LINES[(frames[at].name, frames[at].line)]
        inside = frames[at + 1 :]
        # the statement's call (Terminal.q, or the by-name lookup calling it) below the
        # label's line: else a stack read while the worker moved on (py-spy reads it
        # without stopping the process)
        if not inside or inside[0].name not in STATEMENT_CALLS:
            continue
        # the timer's own work (its frames, its ``with`` line) is not the statement's
        q = next((i for i, f in enumerate(inside) if f.name == "q"), len(inside))
        if q < len(inside) and (
            (q + 1 < len(inside) and inside[q + 1].file.endswith(here))
            or (q + 1 == len(inside) and "timer" in inside[q].source)
        ):
            continue
        category, frame = categorise(inside)
        profile.samples[label][category] += int(count)
        if frame is None:
            frame = next((f for f in reversed(inside) if f.line), inside[-1] if inside else None)
        if frame is not None:
            where = (
                f"{frame.name} ({_tail(frame.file)}{':' + str(frame.line) if frame.line else ''})"
            )
            profile.where[(label, category)][where] += int(count)


def _tail(path: str) -> str:
    parts = Path(path).parts
    for anchor in ("adaptive_client", "psycopg", "tpcc", "bench"):
        if anchor in parts:
            return "/".join(parts[parts.index(anchor) :])
    return Path(path).name


def _package_roots() -> list[str]:
    roots = []
    for package in ("tpcc", "adaptive_client"):
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.origin is not None:
            roots.append(str(Path(spec.origin).resolve().parents[1]))
    return roots


def _run_worker(config: str, args: argparse.Namespace, raw: Path | None) -> dict[str, Any]:
    """The worker's timings for ``config``; under py-spy, writing its samples to ``raw``."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cpu.json"
        env = dict(os.environ)
        # the worker imports the packages this process imported (their lines are read here)
        env["PYTHONPATH"] = os.pathsep.join(
            [*_package_roots(), str(ROOT / "bench"), *filter(None, [env.get("PYTHONPATH")])]
        )
        dsn = args.plain_dsn if config == "plain" else args.dsn
        cmd = [
            sys.executable, str(Path(__file__).resolve()), "--worker", config, "--worker-dsn", dsn,
            "--labels", args.labels, "--n", str(args.n), "--warmup", str(args.warmup),
            "--limit", str(args.limit), "--scale", args.scale,
            "--warehouses", str(args.warehouses), "--out", str(out),
        ]  # fmt: skip
        if raw is not None:
            spied = [
                spy,
                "record",
                "--format",
                "raw",
                "--rate",
                str(args.rate),
                "--gil",
                "--native",
            ]
            cmd = [*spied, "--full-filenames", "-o", str(raw), "--", *cmd]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if done.returncode != 0 or not out.exists():
            sys.stderr.write(done.stdout + done.stderr)
            raise SystemExit(f"the {config} worker failed")
        timing: dict[str, Any] = json.loads(out.read_text())
    return timing


def profile_configs(configs: list[str], args: argparse.Namespace) -> dict[str, Profile]:
    """Each configuration's CPU per statement, timed in ``--rounds`` runs without the
    profiler taking turns (plain, client, plain, ...: the machine's drift moves both
    alike), and its samples from a run under the profiler (see :class:`Profile`)."""
    timings: dict[str, list[dict[str, Any]]] = {c: [] for c in configs}
    for _ in range(args.rounds):
        for config in configs:
            timings[config].append(_run_worker(config, args, None))
    out = {}
    for config, rounds in timings.items():
        labels = {label for t in rounds for label in t["runs"]}
        out[config] = Profile(
            each={
                label: statistics.median(
                    t["cpu"][label] / t["runs"][label] * 1e6 for t in rounds if t["runs"].get(label)
                )
                for label in labels
            },
            runs=rounds[-1]["runs"],
            transactions=rounds[-1]["transactions"],
            user={label: sum(t["user"].get(label, 0.0) for t in rounds) for label in labels},
            system={label: sum(t["system"].get(label, 0.0) for t in rounds) for label in labels},
        )
    with tempfile.TemporaryDirectory() as tmp:
        for config in configs:
            raw = Path(args.keep or tmp) / f"{config}.raw.txt"
            raw.parent.mkdir(parents=True, exist_ok=True)
            _run_worker(config, args, raw)
            read_samples(raw.read_text(), out[config])
    return out


@contextlib.contextmanager
def _databases(args: argparse.Namespace) -> Iterator[None]:
    """``--dsn`` and ``--plain-dsn``, or copies of the templates a sweep left (dropped
    after): the sweep's run databases are reset under a run by any sweep meanwhile."""
    made = []
    for config, attr in (("plain", "plain_dsn"), (args.config, "dsn")):
        if getattr(args, attr):
            continue
        run = _dsn(config, args.scale, args.warehouses)
        template = make_conninfo(
            run, dbname=str(conninfo_to_dict(run)["dbname"]).replace("_run", "_template")
        )
        primed = make_conninfo(template, dbname=f"{conninfo_to_dict(template)['dbname']}_primed")
        if config == "adaptive" and _exists(primed):
            template = primed  # (the workload's peels done)
        copy = make_conninfo(run, dbname=f"statement_profile_{config}")
        _recreate(copy, template=template)
        made.append(copy)
        setattr(args, attr, copy)
    try:
        yield
    finally:
        for dsn in made:
            with psycopg.connect(make_conninfo(dsn, dbname="postgres"), autocommit=True) as c:
                name = sql.Identifier(str(conninfo_to_dict(dsn)["dbname"]))
                c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name))


# -- the report ------------------------------------------------------------------------------
def _detail(profile: Profile, label: str, name: str, top: int) -> list[str]:
    lines = [f"  {name}, the frames deciding each category (µs per execution):"]
    for c in CATEGORIES:
        frames = profile.where.get((label, c))
        if not frames:
            continue
        lines.append(f"    {c}:")
        for where, k in frames.most_common(top):
            lines.append(f"      {profile.sample_us(label, k):>7.1f}  {where}")
    return lines


def report(labels: list[str], client: Profile, plain: Profile, config: str, detail: int) -> str:
    lines: list[str] = []
    for label in labels:
        split, base = client.split(label), plain.split(label)
        lines.append(
            f"{label}: {client.runs.get(label, 0)} executions {config}, "
            f"{plain.runs.get(label, 0)} plain; samples "
            f"{sum(client.samples[label].values())} and {sum(plain.samples[label].values())}; "
            f"kernel {client.kernel_share(label):.0%} and {plain.kernel_share(label):.0%} "
            "of the CPU"
        )
        lines.append(f"  {'µs per execution':<26} {config:>10} {'plain':>8} {'+':>8}")
        for c in CATEGORIES:
            if split[c] >= 0.05 or base[c] >= 0.05:
                lines.append(
                    f"  {c:<26} {split[c]:>10.1f} {base[c]:>8.1f} {split[c] - base[c]:>+8.1f}"
                )
        total, base_total = client.us(label), plain.us(label)
        ratio = f"{total / base_total:.2f}x" if base_total else "-"
        lines.append(
            f"  {'total':<26} {total:>10.1f} {base_total:>8.1f} {total - base_total:>+8.1f}"
            f"  ({ratio})"
        )
        if detail:
            lines += _detail(client, label, config, detail)
            lines += _detail(plain, label, "plain", detail)
        lines.append("")
    lines.append(f"summary: µs per execution, {config} by category; plain psycopg's total")
    head = "".join(f"{SHORT[c]:>8}" for c in CATEGORIES)
    lines.append(f"  {'label':<26}{head}{'total':>8}{'plain':>8}{'x':>6}")
    for label in labels:
        split = client.split(label)
        cells = "".join(f"{split[c]:>8.1f}" for c in CATEGORIES)
        total, base_total = client.us(label), plain.us(label)
        ratio = f"{total / base_total:>6.2f}" if base_total else f"{'-':>6}"
        lines.append(f"  {label:<26}{cells}{total:>8.1f}{base_total:>8.1f}{ratio}")
    lines += _per_mix_transaction(labels, client, plain, config)
    return "\n".join(lines)


def _per_mix_transaction(
    labels: list[str], client: Profile, plain: Profile, config: str
) -> list[str]:
    """The labels' categories weighted by their executions per transaction of the mix."""
    weights = {label: client.per_mix_transaction(label) for label in labels}
    if not any(weights.values()):
        return []
    ours = {c: sum(weights[lb] * client.split(lb)[c] for lb in labels) for c in CATEGORIES}
    base = {c: sum(weights[lb] * plain.split(lb)[c] for lb in labels) for c in CATEGORIES}
    lines = [
        "",
        f"per transaction of the mix ({len(labels)} labels, each weighted by its executions "
        "per transaction): µs",
        f"  {'category':<26} {config:>10} {'plain':>8} {'+':>8}",
    ]
    for c in CATEGORIES:
        if ours[c] >= 0.5 or base[c] >= 0.5:
            lines.append(f"  {c:<26} {ours[c]:>10.0f} {base[c]:>8.0f} {ours[c] - base[c]:>+8.0f}")
    total, base_total = sum(ours.values()), sum(base.values())
    ratio = f"  ({total / base_total:.2f}x)" if base_total else ""
    lines.append(
        f"  {'total':<26} {total:>10.0f} {base_total:>8.0f} {total - base_total:>+8.0f}{ratio}"
    )
    return lines


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument(
        "--labels", default=",".join(ALL_LABELS), help="statement labels, comma-separated"
    )
    ap.add_argument("--n", type=int, default=2000, help="measured executions per label")
    ap.add_argument("--config", default="encrypted", choices=("encrypted", "adaptive"))
    ap.add_argument("--scale", default="tiny", choices=sorted(SCALES))
    ap.add_argument("--warehouses", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3, help="timed runs per configuration")
    ap.add_argument("--rate", type=int, default=2000, help="samples per second")
    ap.add_argument("--warmup", type=int, default=20, help="executions per label before measuring")
    ap.add_argument("--limit", type=float, default=300.0, help="seconds per transaction at most")
    ap.add_argument("--detail", type=int, default=0, help="top functions per category")
    ap.add_argument("--dsn", help="the client's database (default: a copy of a sweep's template)")
    ap.add_argument("--plain-dsn", help="plain's database (default: a copy of a sweep's template)")
    ap.add_argument(
        "--keep", help="directory to keep py-spy's raw samples in (flamegraph.pl's input)"
    )
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--worker-dsn", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    for label in args.labels.split(","):
        transaction_of(label)
    if args.worker:
        worker(args)
        return
    labels = args.labels.split(",")
    with _databases(args):
        profiles = profile_configs(["plain", args.config], args)
    plain, client = profiles["plain"], profiles[args.config]
    print(report(labels, client, plain, args.config, args.detail))


if __name__ == "__main__":
    main()
