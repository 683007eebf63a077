#!/usr/bin/env bash
# MinishLab/semble's public code-search benchmark, 43-repository split (../shared/codesearch): every
# query asked through `query.py --json --no-llm -k 10` (one process each), scored with the
# benchmark's rule, our figures printed beside the published tools' (overall, per category, per
# language, per repository, worst queries). Options pass through: --repos a,b --json --workers N.
#     bench/codesearch.sh                 # all 43 repositories, ~4 minutes on 2 cores
#     python bench/ranking.py             # the same metric in process, with dev and docstring, ~10 s
set -euo pipefail
cd "$(dirname "$0")/.."
exec python ../shared/codesearch/run "$@"
