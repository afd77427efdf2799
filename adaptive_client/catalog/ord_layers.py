"""Which scheme an Ord onion's order layer uses: OPE or ORE (``ord_layer``).

The Ord onion's stack is ``RND -> OPE`` whatever the scheme: the layer named ``OPE`` is
"the order layer", and the rest of the client (the compiler's capabilities, peels,
range indexes, MIN/MAX) treats it alike.  What differs is data, recorded per onion
column in the sealed catalog (``OnionColumn.ord_scheme``) when the onion is made:

* ``OPE`` (Boldyreva et al.): the stored bytes are ordered as the values, and carry
  their leading bits (docs/security.md, "What OPE ciphertexts show");
* ``ORE`` (Lewi–Wu, ``schemes/ore.py``): pseudo-random bytes, stored in a column of type
  ``adaptive.ore`` whose operators and B-tree operator class compare them
  (``sql/udf/26_ore.sql``): the order and the first differing byte of two values, and
  nothing of a value alone.

The choice: a column's ``ord_layer`` in the onion configuration, else the
configuration's ``[defaults] ord_layer``, else the environment's ``ADAPTIVE_ORD_LAYER``,
else OPE.
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import ConfigError

ORD_LAYERS = ("OPE", "ORE")
ENV = "ADAPTIVE_ORD_LAYER"
#: the server type of an Ord onion column at ORE
ORE_TYPE = "adaptive.ore"
#: the first byte of each scheme's ciphertexts (schemes.OPE.tag, schemes.ORE.tag)
TAG = {"OPE": 3, "ORE": 4}


def parse(raw: Any, where: str) -> str | None:
    """A configured ``ord_layer`` (None: not configured)."""
    if raw is None:
        return None
    layer = str(raw).strip().upper()
    if layer not in ORD_LAYERS:
        raise ConfigError(f"{where}: ord_layer must be one of {', '.join(ORD_LAYERS)}, not {raw!r}")
    return layer


def require_type(conn: Any, where: str) -> None:
    """Refuse an Ord onion at ORE where the database lacks ``adaptive.ore`` (installed by
    a role without superuser, which cannot create a type's operator class): refused when
    the table is made, before its first ORDER BY would fail to build the onion."""
    row = conn.execute("SELECT to_regtype(%s)", (ORE_TYPE,)).fetchone()
    if row is None or row[0] is None:
        raise ConfigError(
            f"{where}: ord_layer = ORE needs the {ORE_TYPE} type, which this database does "
            "not have (`adaptive-db init` run by a superuser installs it); "
            'or set ord_layer = "OPE"'
        )


def chosen(column: str | None = None, defaults: str | None = None) -> str:
    """The scheme of a new Ord onion: the column's choice, the configuration's default,
    the environment's, or OPE."""
    return column or defaults or parse(os.environ.get(ENV) or None, ENV) or "OPE"
