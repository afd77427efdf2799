"""A small blog: users, posts and tags with SQLAlchemy's ORM, a Flask app (sync) and the
same service for asyncio.  Nothing in it knows whether the database is encrypted: that is
the database URL's business (see README.md)."""
