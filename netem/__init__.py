"""Emulated WAN latency between TPC-C clients and the database server.

``emulate(host, port, rtt_ms)`` yields the address clients should connect to.  It uses
``tc netem`` in a network namespace where the kernel has it, and otherwise a user-space
TCP proxy on loopback that delays each direction by half the round trip.
"""

from __future__ import annotations

from .emulate import Emulation, emulate, netem_available

__all__ = ["Emulation", "emulate", "netem_available"]
