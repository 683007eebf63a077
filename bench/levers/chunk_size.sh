#!/bin/bash
# The chunk size policy as a lever: MAX_CHARS (a definition or section over it is windowed),
# WINDOW_LINES and OVERLAP_LINES (the windows), patched in a throwaway git worktree of HEAD.
# Every eval corpus is re-ingested with --full and both sets are scored with `rag eval`.
#
#     bash bench/levers/chunk_size.sh MAX_CHARS WINDOW_LINES [OVERLAP_LINES]
#
# It rewrites the indexes under $RAG_CORPORA (default ~/.cache/rag-corpora): run it once more with the defaults
# (2400 50 10) at the end. Needs a git checkout and the venv's python in $PYTHON.
set -e
REPO=$(cd "$(dirname "$0")/../.." && pwd)
SHARED=$REPO/../shared
MAX=$1; WL=$2; OVL=${3:-10}
W=${TMPDIR:-/tmp}/rag-chunk-size-$MAX-$WL-$OVL
rm -rf $W; git -C $REPO worktree add -q --detach $W HEAD 2>/dev/null
trap 'cd /; git -C $REPO worktree remove --force $W' EXIT
sed -i "s/^MAX_CHARS = 2400/MAX_CHARS = $MAX/; s/^WINDOW_LINES = 50/WINDOW_LINES = $WL/; s/^OVERLAP_LINES = 10/OVERLAP_LINES = $OVL/" $W/rag/chunking/base.py
cd $W
for s in dev docstring; do
  if [ $s = dev ]; then f=dev-questions; r=${RAG_CORPORA:-$HOME/.cache/rag-corpora}; else f=docstring-queries; r=${RAG_CORPORA:-$HOME/.cache/rag-corpora}/docstring-stripped; fi
  ${PYTHON:-python} -m rag eval $SHARED/eval/$f.jsonl --corpus-root $r --full 2>/dev/null | grep overall | sed "s/^/$MAX $WL $OVL $s /"
done
