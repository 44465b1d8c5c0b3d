#!/usr/bin/env bash
# The layout rules of the product sources: the include graph of the module
# folders runs one way, with the edges the layout allows
# (scripts/check-deps.py), and no file has more than 1000 lines nor a
# function more than 150 (scripts/check-sizes.py).
# usage: tests/cli/layout.sh BUILD_DIR (the build folder is unused)
set -u
command -v python3 >/dev/null || { echo "skip: no python3"; exit 0; }
python3 scripts/check-deps.py || { echo "layout: the dependencies break the layout (above)"; exit 1; }
python3 scripts/check-sizes.py || { echo "layout: a file or function is too long (above)"; exit 1; }
exit 0
