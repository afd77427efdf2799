#!/usr/bin/env bash
# Install the Debian packages the project needs, if any is missing:
# PostgreSQL 15 with PL/Python, contrib (pgcrypto), pycryptodome for the server's Python,
# and python3-venv for the project's virtual environment.  Installed packages are left alone.
set -euo pipefail

packages=(postgresql-15 postgresql-plpython3-15 postgresql-contrib python3-pycryptodome python3-venv)

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
