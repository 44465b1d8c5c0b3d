#!/bin/sh
# scripts/gpu-slug.sh - a GPU's name, a line of standard input each, as the
# file name of its tables in data/parity/ and data/baselines/: lower case,
# each run of other characters one '-' ("NVIDIA H100 80GB HBM3" ->
# nvidia-h100-80gb-hbm3).  One rule for every script that looks a table up
# or writes one, so that they agree on the name.
tr 'A-Z' 'a-z' | sed 's/[^a-z0-9][^a-z0-9]*/-/g; s/^-//; s/-$//'
