"""The DB-API surface, as psycopg 3 has it: connections (the session), cursors (execution),
COPY, asyncio, pools, the direct statement path."""
