"""Adaptations: peels, onions built on first use, join adjustments, compaction, range indexes,
and the executor that meets a plan's needs."""
