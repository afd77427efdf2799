#!/usr/bin/env bash
# Install the Debian packages the project needs, if any is missing:
# PostgreSQL 15 with PL/Python, contrib (pgcrypto), pycryptodome for the server's Python,
# python3-venv for the project's virtual environment, ICU's headers, pkg-config and a C++
# compiler (PyICU builds against the system's ICU -- the one PostgreSQL's ICU collations
# use, so the client's collator is the server's on one machine), the
# locales package with the en_US.UTF-8 locale (the libc collation the tests compare
# with), and the parts the cluster tests run beside the server: PgBouncer (the
# transaction pooler) and pg_auto_failover (a monitored primary and standby).
# Installed packages are left alone.
set -euo pipefail

packages=(postgresql-15 postgresql-plpython3-15 postgresql-contrib python3-pycryptodome python3-venv
          libicu-dev pkg-config g++ python3-dev locales
          pgbouncer postgresql-15-auto-failover)
locale_name=en_US.UTF-8

# The libc locale: generated into the archive (locale-gen) and as a directory of its own,
# which a PostgreSQL server started before the locale existed also finds (glibc maps the
# archive once per process).
ensure_locale() {
    if locale -a 2>/dev/null | grep -qix 'en_US.utf8'; then
        return 0
    fi
    if [ "$(id -u)" -ne 0 ]; then
        echo "install-system-deps: the $locale_name locale is missing;" \
             "as root: sed -i 's/^# *$locale_name/$locale_name/' /etc/locale.gen && locale-gen" >&2
        return 1
    fi
    echo "install-system-deps: generating the $locale_name locale"
    if [ -f /etc/locale.gen ]; then
        sed -i "s/^# *$locale_name UTF-8/$locale_name UTF-8/" /etc/locale.gen
        grep -q "^$locale_name UTF-8" /etc/locale.gen || echo "$locale_name UTF-8" >> /etc/locale.gen
    fi
    locale-gen >/dev/null
    localedef --no-archive -i en_US -c -f UTF-8 -A /usr/share/locale/locale.alias "$locale_name"
}

if ! command -v dpkg >/dev/null 2>&1; then
    echo "install-system-deps: not a Debian system; install these (or their equivalents)" \
         "yourself: ${packages[*]}" >&2
    exit 0
fi

missing=()
for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    ensure_locale
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "install-system-deps: missing Debian packages: ${missing[*]}" >&2
    echo "install them as root: apt-get install ${missing[*]}" >&2
    exit 1
fi
echo "install-system-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
ensure_locale
