#!/usr/bin/env bash
# ASan + UBSan build of scantok._native in a temporary folder, and the scanner tests under it.
# Usage: bash tests/sanitize/run.sh [--keep] [pytest args...]   (see tests/sanitize/run.py)
set -euo pipefail
cd "$(dirname "$0")/../.."
exec "${PYTHON:-python3}" tests/sanitize/run.py "$@"
