"""The client engine: what the server cannot evaluate over ciphertexts, evaluated in process
with PostgreSQL's semantics."""
