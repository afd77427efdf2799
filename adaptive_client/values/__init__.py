"""SQL values: each type's encoding, PostgreSQL's input and output forms, collations, and how
values reach the application and the server."""
