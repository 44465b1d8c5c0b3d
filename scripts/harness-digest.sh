#!/usr/bin/env bash
# scripts/harness-digest.sh [ROOT] - one SHA-256 over the sources that decide
# what kbv collect measures: the collector, the worker and the baselines
# (collect/, common/, include/, dispatch/, the Makefile), the bundled
# candidate sets and the committed kernel choices (data/candidates/,
# data/baselines/); documentation (*.md) and the sets' set.json left out
# (their expected classes and descriptions change no measurement, and the
# settings that do, precision and compare_with, are in the manifest, which
# collect --resume checks).  Two checkouts with the
# same digest build the same harness, whatever their commits: a collect
# that outlasts one session (scripts/suite-session.sh) is continued only by
# a harness of the same digest, so that commits to analyze, render or the
# documentation between sessions do not stop it.
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
find collect common include dispatch data/candidates data/baselines Makefile -type f ! -name '*.md' \
     ! -name '*.pyc' ! -path 'data/candidates/*/set.json' -print0 |
    LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1
