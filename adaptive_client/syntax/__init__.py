"""The application's SQL text before any rewrite: statements split, placeholders, session
commands recognised."""
