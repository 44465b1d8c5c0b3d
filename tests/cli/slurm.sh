#!/usr/bin/env bash
# The Slurm job templates on a real one-node cluster started for the test
# (tests/slurm/run.sh: needs root, slurm-wlm and munge; KBV_SKIP_SLURM=1 skips).
exec bash tests/slurm/run.sh "$1"
