"""TPC-C load time and on-disk size: adaptive against plain, loaded in the same run.

    python bench/load_size.py [--scale small|full] [--warehouses 1]

Loads the plain database (psycopg) and the adaptive one (through the client, every
column in all the onions its type supports, all at RND) one after the other into fresh
databases of the embedded cluster, then measures both on disk after VACUUM.  Targets:
adaptive load time <= 3x plain, adaptive size <= 4x plain.

The last line gives both ratios.
"""

from __future__ import annotations

import argparse

from tpcc.cli import _cluster_dsn, _load_into, database_bytes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", default="small", choices=("tiny", "small", "full"))
    ap.add_argument("--warehouses", type=int, default=1)
    args = ap.parse_args()
    seconds, size = {}, {}
    for config in ("plain", "adaptive"):
        dsn = _cluster_dsn(f"bench_load_{config}")
        seconds[config] = _load_into(dsn, config, args.warehouses, args.scale)
        size[config] = database_bytes(dsn)
        print(f"{config:<9} load {seconds[config]:8.1f} s   size {size[config] / 2**20:8.1f} MB")
    load_ratio = seconds["adaptive"] / seconds["plain"]
    size_ratio = size["adaptive"] / size["plain"]
    print(
        f"adaptive/plain ({args.warehouses} warehouse(s), {args.scale}): "
        f"load time {load_ratio:.2f}x (target <= 3x), size {size_ratio:.2f}x (target <= 4x)"
    )


if __name__ == "__main__":
    main()
