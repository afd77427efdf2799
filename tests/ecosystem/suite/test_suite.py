from sqlalchemy.testing.suite import *  # noqa: F403
