"""The sealed schema: tables, columns, onions and their layers, keys, the onion configuration,
and what the schema's objects (defaults, checks, foreign keys, views, sequences, user types,
precomputed expressions) mean to a statement."""
