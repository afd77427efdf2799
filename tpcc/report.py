"""The sweep report: Markdown with PNG plots (matplotlib), from a results folder.

Figures follow the source paper: throughput vs latency per configuration (Fig. 5),
client-side encryption time per transaction type (Fig. 6), response time and overhead of
a SELECT and of the order-line INSERT vs latency (Figs. 7–8), the per-statement
encryption/decryption counts (Table I), and the throughput ratios to plain.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from .driver import variant

CONFIG_ORDER = ["plain", "encrypted", "adaptive"]
KEPT = "plain-kept"  # the second baseline: plain with the client's statement rule
# what the points are filed under: the configurations and the second baseline
VARIANT_ORDER = ["plain", KEPT, "encrypted", "adaptive"]
COLORS = {"plain": "#4c72b0", KEPT: "#8172b3", "encrypted": "#dd8452", "adaptive": "#55a868"}
PRIMED = "adaptive primed"  # (tpcc.cli.PRIMED)
PRIMED_BOUND = 3.0  # the primed adaptive template's size, at most this times plain's
CHOSEN_SELECT = "no.item"
CHOSEN_INSERT = "no.insert_order_line"
STATEMENT_CLIENTS = 10  # the study's Figs. 7-8 and Table I: 10 clients

# the study's Table I for its chosen SELECT and INSERT: per layer, encryptions (E) and
# decryptions (D) per execution in its encrypted (DET) and adaptive configurations
# (* the adaptive INSERT's OPE encryptions, which kept its overhead high at every latency)
STUDY_TABLE1 = {
    CHOSEN_SELECT: {"DET": ("2E", "2E + 3D"), "OPE": ("-", "-"), "RND": ("3D", "3D")},
    CHOSEN_INSERT: {"DET": ("2E", "6E"), "OPE": ("-", "3E*"), "RND": ("7E", "7E")},
}


def load_results(folder: Path) -> list[dict[str, Any]]:
    runs = []
    for f in sorted(folder.glob("*.json")):
        if f.name == "sweep.json":
            continue
        data = json.loads(f.read_text())
        if "tpm" in data:
            runs.append(data)
    return runs


def _index(runs: list[dict[str, Any]]) -> dict[tuple[str, int, float], dict[str, Any]]:
    return {(variant(r), r["clients"], float(r["latency_ms"])): r for r in runs}


def _fig_throughput(runs: list[dict[str, Any]], out: Path) -> Path:
    """Top: tpm per configuration on a log axis (latency divides throughput by orders of
    magnitude, a linear axis flattens every latency point); bottom: the ratios to plain."""
    clients = sorted({r["clients"] for r in runs})
    idx = _index(runs)
    fig, axes = plt.subplots(
        2, len(clients), figsize=(5 * len(clients), 7), squeeze=False, sharex="col"
    )
    for col, n in enumerate(clients):
        top, bottom = axes[0][col], axes[1][col]
        for config in VARIANT_ORDER:
            pts = sorted(
                (r["latency_ms"], r["tpm"])
                for r in runs
                if variant(r) == config and r["clients"] == n and r["tpm"] > 0
            )
            if pts:
                top.plot(*zip(*pts, strict=True), marker="o", label=config, color=COLORS[config])
            if config in ("plain", KEPT):
                continue
            ratio = sorted(
                (lat, r["tpm"] / p["tpm"])
                for (c, k, lat), r in idx.items()
                if c == config
                and k == n
                and (p := idx.get(("plain", n, lat))) is not None
                and p["tpm"]
            )
            if ratio:
                bottom.plot(
                    *zip(*ratio, strict=True),
                    marker="o",
                    label=f"{config} / plain",
                    color=COLORS[config],
                )
        top.set_yscale("log")
        top.set_title(f"{n} clients")
        top.set_ylabel("committed transactions / minute (log)")
        top.grid(alpha=0.3, which="both")
        top.legend()
        bottom.axhline(1.0, color=COLORS["plain"], lw=1, ls="--")
        bottom.set_ylim(0, max(1.2, bottom.get_ylim()[1]))
        bottom.set_xlabel("emulated round-trip latency (ms)")
        bottom.set_ylabel("throughput relative to plain")
        bottom.grid(alpha=0.3)
        bottom.legend()
    fig.suptitle("Throughput vs latency (Fig. 5)")
    fig.tight_layout()
    path = out / "fig5_throughput.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _fig_crypto(runs: list[dict[str, Any]], out: Path) -> Path:
    per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in runs:
        if r["config"] == "plain":
            continue
        for txn, s in r["transactions"].items():
            per[r["config"]][txn].append(s["crypto_ms_mean"])
    txns = ["new_order", "payment", "order_status", "delivery", "stock_level"]
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.38
    for i, config in enumerate(["encrypted", "adaptive"]):
        vals = [sum(per[config][t]) / len(per[config][t]) if per[config][t] else 0.0 for t in txns]
        ax.bar(
            [x + i * width for x in range(len(txns))],
            vals,
            width,
            label=config,
            color=COLORS[config],
        )
    ax.set_xticks([x + width / 2 for x in range(len(txns))], txns)
    ax.set_ylabel("client encryption + decryption time (ms / transaction)")
    ax.set_title("Client-side crypto time per transaction type (Fig. 6)")
    ax.legend()
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    path = out / "fig6_crypto.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _fig_statement(
    runs: list[dict[str, Any]], label: str, title: str, name: str, out: Path
) -> Path:
    idx = _index(runs)
    clients = _statement_clients(runs)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    lat = sorted({r["latency_ms"] for r in runs})
    for config in CONFIG_ORDER:
        pts = [
            (x, idx[(config, clients, x)]["statements"].get(label, {}).get("mean_ms"))
            for x in lat
            if (config, clients, x) in idx
        ]
        pts = [(x, y) for x, y in pts if y is not None]
        if pts:
            a1.plot(*zip(*pts, strict=True), marker="o", label=config, color=COLORS[config])
        if config != "plain":
            over = []
            for x, y in pts:
                base = (
                    idx.get(("plain", clients, x), {})
                    .get("statements", {})
                    .get(label, {})
                    .get("mean_ms")
                )
                if base:
                    over.append((x, 100.0 * (y - base) / base))
            if over:
                a2.plot(*zip(*over, strict=True), marker="o", label=config, color=COLORS[config])
    a1.set_title(f"{title}: mean response time ({clients} clients)")
    a1.set_xlabel("latency (ms)")
    a1.set_ylabel("ms")
    a2.set_title("overhead over plain")
    a2.set_xlabel("latency (ms)")
    a2.set_ylabel("%")
    for a in (a1, a2):
        a.grid(alpha=0.3)
        a.legend()
    fig.tight_layout()
    path = out / name
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _statement_clients(runs: list[dict[str, Any]]) -> int:
    """The client count Figs. 7-8 are drawn at: the study's 10 where the sweep ran it."""
    counts = {r["clients"] for r in runs}
    return STATEMENT_CLIENTS if STATEMENT_CLIENTS in counts else max(counts)


def _statement_overheads(runs: list[dict[str, Any]]) -> list[str]:
    """Figs. 7-8 as numbers: the chosen statements' mean response time per latency and
    their overhead over plain, with a 95% interval (normal approximation)."""
    idx = _index(runs)
    clients = _statement_clients(runs)
    lines = [
        f"{clients} clients; mean response time in ms (executions), overhead over plain.",
        "",
        "| statement | latency (ms) | plain | encrypted | adaptive |",
        "|---|---:|---:|---:|---:|",
    ]
    for label in (CHOSEN_SELECT, CHOSEN_INSERT):
        for lat in sorted({r["latency_ms"] for r in runs if r["clients"] == clients}):
            base = idx.get(("plain", clients, float(lat)), {}).get("statements", {}).get(label)
            cells = []
            for config in CONFIG_ORDER:
                st = idx.get((config, clients, float(lat)), {}).get("statements", {}).get(label)
                if not st or not st["count"]:
                    cells.append("-")
                    continue
                cell = f"{st['mean_ms']:.2f} ({st['count']})"
                if config != "plain" and base and base["count"] and base["mean_ms"]:
                    ratio, err = _mean_ratio(st, base)
                    cell += f" {100 * (ratio - 1):+.1f} % ± {100 * err:.1f}"
                cells.append(cell)
            lines.append(f"| `{label}` | {lat:g} | " + " | ".join(cells) + " |")
    return lines


def _points(runs: list[dict[str, Any]]) -> list[str]:
    """Every point: its throughput, what it committed, and the consistency check of its
    database after the run."""
    lines = [
        "| configuration | clients | latency (ms) | emulated by | tpm | tpmC | committed "
        "| rolled back | retries | errors | consistent |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    order = {c: i for i, c in enumerate(VARIANT_ORDER)}
    for r in sorted(runs, key=lambda r: (r["clients"], r["latency_ms"], order[variant(r)])):
        check = r.get("consistency")
        consistent = "not checked" if check is None else "yes" if not check else "NO"
        lines.append(
            f"| {variant(r)} | {r['clients']} | {r['latency_ms']:g} | "
            f"{r.get('latency_method', '-')} | {r['tpm']:.0f} | {r['tpmC']:.0f} | "
            f"{_committed(r)} | {sum(r['rolled_back'].values())} | "
            f"{sum(r['retries'].values())} | {sum(r['errors'].values())} | {consistent} |"
        )
    return lines


def _mean_ratio(a: dict[str, Any], b: dict[str, Any]) -> tuple[float, float]:
    """The ratio of two mean response times (``mean_ms``, ``std_ms``, ``count``) and its
    95% interval's half-width (normal approximation)."""
    ratio = a["mean_ms"] / b["mean_ms"]
    rel = (
        (a.get("std_ms", 0.0) / a["mean_ms"]) ** 2 / a["count"]
        + (b.get("std_ms", 0.0) / b["mean_ms"]) ** 2 / b["count"]
    ) ** 0.5
    return ratio, 1.96 * ratio * rel


def _committed(run: dict[str, Any]) -> int:
    return int(sum(run["committed"].values()))


def _ratio_cell(o: dict[str, Any] | None, base: dict[str, Any]) -> str:
    """``o``'s throughput relative to ``base``'s, with a rough 95% interval: transaction
    counts taken as Poisson, so the ratio's relative standard error is
    sqrt(1/n_base + 1/n_o); in brackets the transactions ``o`` committed."""
    if not (o and base["tpm"] and _committed(base) and _committed(o)):
        return "-"
    ratio = o["tpm"] / base["tpm"]
    err = 1.96 * ratio * (1 / _committed(base) + 1 / _committed(o)) ** 0.5
    return f"{ratio:.2f} ± {err:.2f} ({_committed(o)})"


def _ratios(runs: list[dict[str, Any]]) -> list[str]:
    """Throughput ratios to plain and, where the sweep ran it, to plain-kept (plain
    psycopg with the client's rule of keeping prepared statements across rollbacks)."""
    idx = _index(runs)
    kept = any(k[0] == KEPT for k in idx)
    lines = [
        "| clients | latency (ms) | plain tpm (txns) | encrypted/plain | adaptive/plain |"
        + (" plain-kept tpm (txns) | encrypted/plain-kept | adaptive/plain-kept |" if kept else ""),
        "|---:|---:|---:|---:|---:|" + ("---:|---:|---:|" if kept else ""),
    ]
    for (config, n, lat), r in sorted(idx.items(), key=lambda kv: (kv[0][1], kv[0][2])):
        if config != "plain":
            continue
        cells = [f"{r['tpm']:.0f} ({_committed(r)})"]
        cells += [_ratio_cell(idx.get((other, n, lat)), r) for other in ("encrypted", "adaptive")]
        if kept:
            k = idx.get((KEPT, n, lat))
            cells.append(f"{k['tpm']:.0f} ({_committed(k)})" if k else "-")
            cells += [
                _ratio_cell(idx.get((other, n, lat)), k) if k else "-"
                for other in ("encrypted", "adaptive")
            ]
        lines.append(f"| {n} | {lat:g} | " + " | ".join(cells) + " |")
    return lines


def _round_ratios(runs: list[dict[str, Any]]) -> list[str]:
    """Each round's throughput ratios, round by round: the configurations ran in turn
    within a round, so a round's ratio compares runs minutes apart at most, and the
    spread over rounds shows what a drift of the machine would have moved."""
    idx = _index(runs)
    rounds = max((len(r.get("rounds", [])) for r in runs), default=0)
    if rounds < 2:
        return []
    pairs = [
        (other, base)
        for base in ("plain", KEPT)
        if any(k[0] == base for k in idx)
        for other in ("encrypted", "adaptive")
    ]
    lines = [
        f"Per round ({rounds} rounds, each configuration in turn):",
        "",
        "| clients | latency (ms) | " + " | ".join(f"{o}/{b}" for o, b in pairs) + " |",
        "|---:|---:|" + "---|" * len(pairs),
    ]
    points = sorted({(n, lat) for _c, n, lat in idx})
    for n, lat in points:
        cells = []
        for other, base in pairs:
            o, b = idx.get((other, n, lat)), idx.get((base, n, lat))
            if not o or not b:
                cells.append("-")
                continue
            cells.append(
                ", ".join(
                    f"{x['tpm'] / y['tpm']:.2f}" if y["tpm"] else "-"
                    for x, y in zip(o.get("rounds", []), b.get("rounds", []), strict=False)
                )
            )
        lines.append(f"| {n} | {lat:g} | " + " | ".join(cells) + " |")
    return lines


def _sizes(meta: dict[str, Any]) -> str:
    """The templates' sizes; the primed adaptive one's against plain's and its bound."""
    sizes = meta.get("database_mb", {})
    line = "Database sizes (MB): " + ", ".join(f"{k} {v:g}" for k, v in sizes.items()) + "."
    primed, plain = sizes.get(PRIMED), sizes.get("plain")
    if primed and plain:
        within = "within" if primed <= PRIMED_BOUND * plain else "OVER"
        line += (
            f" The primed adaptive template is {primed / plain:.2f}× plain's "
            f"({within} the bound of {PRIMED_BOUND:g}×)."
        )
    return line


def _response_ratios(runs: list[dict[str, Any]]) -> list[str]:
    """Mean response time of each transaction type relative to plain, with a 95% interval
    (normal approximation).  Unlike throughput, which lock conflicts and retries make
    noisy at small scale, a response time ratio is measured over every committed
    transaction and isolates what encryption adds to each one."""
    idx = _index(runs)
    kinds = ("new_order", "payment", "order_status", "delivery", "stock_level")
    lines = [
        "| clients | latency (ms) | configuration | " + " | ".join(kinds) + " |",
        "|---:|---:|---|" + "---:|" * len(kinds),
    ]
    for (config, n, lat), r in sorted(idx.items(), key=lambda kv: (kv[0][1], kv[0][2])):
        if config != "plain":
            continue
        for other in ("encrypted", "adaptive"):
            o = idx.get((other, n, lat))
            if o is None:
                continue
            cells = []
            for kind in kinds:
                a, b = o["transactions"].get(kind), r["transactions"].get(kind)
                if not a or not b or not a["count"] or not b["count"] or not b["mean_ms"]:
                    cells.append("-")
                    continue
                ratio, err = _mean_ratio(a, b)
                cells.append(f"{ratio:.2f} ± {err:.2f}")
            lines.append(f"| {n} | {lat:g} | {other} / plain | " + " | ".join(cells) + " |")
    return lines


def _counts(c: dict[str, float], scheme: str) -> str:
    """``2E + 3D``: one layer's encryptions and decryptions per execution."""
    parts = [
        f"{v:.3g}{letter}"
        for letter, v in (("E", c.get(f"enc:{scheme}", 0.0)), ("D", c.get(f"dec:{scheme}", 0.0)))
        if v
    ]
    return " + ".join(parts) or "-"


def _table1(runs: list[dict[str, Any]]) -> list[str]:
    """Per statement, encryptions and decryptions per execution (OPE apart, as the study
    counts them), from the runs at the study's 10 clients where there are some; then the
    chosen SELECT and INSERT per layer beside the study's own Table I."""
    clients = _statement_clients(runs)
    agg: dict[str, dict[str, dict[str, float]]] = defaultdict(dict)
    for r in sorted(runs, key=lambda r: r["clients"] != clients):
        if r["config"] == "plain":
            continue
        for label, c in r["table1"].items():
            agg[label].setdefault(r["config"], c)
    lines = [
        "| statement | encrypted: enc / OPE enc / dec / OPE dec | adaptive: enc / OPE enc / dec / OPE dec |",
        "|---|---|---|",
    ]
    for label in sorted(agg):
        cells = []
        for config in ("encrypted", "adaptive"):
            c = agg[label].get(config)
            cells.append(
                f"{c['enc']:.1f} / {c['enc_ope']:.1f} / {c['dec']:.1f} / {c['dec_ope']:.1f}"
                if c
                else "-"
            )
        lines.append(f"| `{label}` | {cells[0]} | {cells[1]} |")
    lines += [
        "",
        "The chosen SELECT and INSERT per layer (E: encryptions, D: decryptions per "
        "execution), beside the study's Table I (* OPE):",
        "",
        "| statement | layer | study: encrypted | ours: encrypted | study: adaptive "
        "| ours: adaptive |",
        "|---|---|---|---|---|---|",
    ]
    for label, study in STUDY_TABLE1.items():
        ours = agg.get(label, {})
        schemes = {
            k.split(":", 1)[1] for c in ours.values() for k, v in c.items() if ":" in k and v
        }
        for scheme in [*study, *sorted(schemes - set(study))]:
            enc_study, ada_study = study.get(scheme, ("-", "-"))
            cells = [
                _counts(ours[config], scheme) if config in ours else "-"
                for config in ("encrypted", "adaptive")
            ]
            lines.append(
                f"| `{label}` | {scheme} | {enc_study} | {cells[0]} | {ada_study} | {cells[1]} |"
            )
    return lines


def write_report(folder: Path) -> Path:
    runs = load_results(folder)
    if not runs:
        raise FileNotFoundError(f"no run results in {folder}")
    meta_file = folder / "sweep.json"
    meta = json.loads(meta_file.read_text()) if meta_file.exists() else {}
    figs = [
        _fig_throughput(runs, folder),
        _fig_crypto(runs, folder),
        _fig_statement(runs, CHOSEN_SELECT, f"SELECT `{CHOSEN_SELECT}`", "fig7_select.png", folder),
        _fig_statement(runs, CHOSEN_INSERT, f"INSERT `{CHOSEN_INSERT}`", "fig8_insert.png", folder),
    ]
    methods = sorted({r.get("latency_method", "none") for r in runs})
    # (psycopg's own rule, the default, goes unsaid)
    plain_rules = sorted(
        {r.get("plain_statements") or "psycopg" for r in runs if variant(r) != KEPT} - {"psycopg"}
    )
    peels = {
        f"{r['config']}-c{r['clients']}-l{r['latency_ms']:g}": r["peels"]
        for r in runs
        if r["config"] == "adaptive"
    }
    md = [
        "# TPC-C over plain, encrypted and adaptive databases",
        "",
        f"Runs: {len(runs)}; warehouses {meta.get('warehouses', runs[0]['warehouses'])}, scale "
        f"{meta.get('scale', '-')}, measured {runs[0]['duration_s']:g} s after {runs[0]['warmup_s']:g} s of "
        f"warm-up, isolation {runs[0]['isolation']}; latency emulated by: {', '.join(methods)}"
        + "".join(f"; plain's prepared statements: {rule}" for rule in plain_rules)
        + (
            f"; each point in {meta['rounds']} interleaved rounds (the configurations in "
            "turn, each run a fresh copy of its template)"
            if meta.get("rounds")
            else ""
        )
        + ".",
        f"Load times (s): {meta.get('load_seconds', {})}.",
        _sizes(meta),
        "Code: " + ", ".join(sorted({str(r.get("revision", "not recorded")) for r in runs})) + ".",
        "",
        "## Throughput vs latency (Fig. 5)",
        f"![throughput]({figs[0].name})",
        "",
        "## Every point",
        *_points(runs),
        "",
        "## Throughput relative to plain",
        "95 % intervals; in brackets the transactions each configuration committed.",
        "",
        *_ratios(runs),
        "",
        *_round_ratios(runs),
        "",
        "## Response time per transaction type relative to plain",
        *_response_ratios(runs),
        "",
        "## Client-side crypto time per transaction (Fig. 6)",
        f"![crypto]({figs[1].name})",
        "",
        "## Response time of a SELECT and of the order-line INSERT (Figs. 7–8)",
        f"![select]({figs[2].name})",
        "",
        f"![insert]({figs[3].name})",
        "",
        *_statement_overheads(runs),
        "",
        "## Encryptions and decryptions per statement execution (Table I)",
        *_table1(runs),
        "",
        "## Peels of the adaptive database (warm-up / measured interval)",
        *(
            [
                f"Before the points ran, priming built and peeled {meta['primed']['peels']} "
                f"onion(s) in {meta['primed']['seconds']:g} s, once, on a copy of the "
                "adaptive template every adaptive point starts from.",
                "",
            ]
            if meta.get("primed")
            else []
        ),
        *[f"- {k}: {v['warmup']} / {v['measured']}" for k, v in sorted(peels.items())],
        "",
    ]
    path = folder / "report.md"
    path.write_text("\n".join(md))
    return path
