"""DDL through the client: CREATE, ALTER and DROP of tables, types, sequences and views;
statements about the database's objects."""
