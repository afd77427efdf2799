"""Django through ``ENGINE = "adaptive_client.django"``: the example shop
(examples/django_app) runs its own tests against a plain database and an encrypted one
(only the settings' engine differs); ``migrate`` of Django's contrib apps and the shop,
then ``inspectdb`` and ``makemigrations --check``, on an encrypted database; and Django's
own test suite, module by module, against Django's PostgreSQL backend as the baseline
(slow: tests/ecosystem/django_suite.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from psycopg.conninfo import conninfo_to_dict

pytest.importorskip("django")

ROOT = Path(__file__).parents[2]
SHOP = ROOT / "examples" / "django_app"


def _shop_env(dsn: str, key_file: Path | None, name: str | None = None) -> dict[str, str]:
    d = conninfo_to_dict(dsn)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "SHOP_DB_NAME": name or str(d["dbname"]),
        "SHOP_DB_HOST": str(d.get("host") or ""),
        "SHOP_DB_PORT": str(d.get("port") or ""),
        "SHOP_DB_USER": str(d.get("user") or ""),
        "SHOP_DB_PASSWORD": str(d.get("password") or ""),
    }
    env.pop("SHOP_MASTER_KEY_FILE", None)
    if key_file is not None:
        env["SHOP_MASTER_KEY_FILE"] = str(key_file)
    return env


def _manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=SHOP,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _test_db_name() -> str:
    # ``manage.py test`` creates test_<name> itself (and drops it at the end)
    return f"shop_{uuid.uuid4().hex[:10]}"


def test_example_on_plain_database(pg_cluster: str) -> None:
    done = _manage(_shop_env(pg_cluster, None, _test_db_name()), "test", "--noinput")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Ran 9 tests" in done.stderr


def test_example_on_encrypted_database(pg_cluster: str, key_file: Path) -> None:
    done = _manage(_shop_env(pg_cluster, key_file, _test_db_name()), "test", "--noinput")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Ran 9 tests" in done.stderr


def test_migrate_contrib_apps_on_encrypted_database(
    new_database: Callable[..., str], key_file: Path
) -> None:
    env = _shop_env(new_database("dj_migrate"), key_file)
    done = _manage(env, "migrate", "--noinput")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for app in ("admin", "auth", "contenttypes", "sessions", "shop"):
        assert f"Applying {app}." in done.stdout

    # the sealed catalog answers Django's introspection: nothing to migrate, and
    # inspectdb writes the models back in the application's names
    done = _manage(env, "makemigrations", "--check", "--dry-run")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    done = _manage(env, "inspectdb", "auth_user", "shop_orderline")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "class AuthUser(models.Model):" in done.stdout
    assert "username = models.CharField(unique=True, max_length=150)" in done.stdout
    assert "order = models.ForeignKey('ShopOrder', models.DO_NOTHING)" in done.stdout
    assert "unique_together = (('order', 'product'),)" in done.stdout

    # and the migrations are undone
    done = _manage(env, "migrate", "shop", "zero", "--noinput")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


@pytest.mark.slow
def test_django_suite() -> None:
    """Django's named app test modules: every failure the baseline does not have is an
    expected failure listed with its reason (adaptive_client/django/expected_failures.py)."""
    done = subprocess.run(
        [sys.executable, str(Path(__file__).parent / "django_suite.py")],
        capture_output=True,
        text=True,
        timeout=4 * 3600,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
