"""Write the search-planning prompts of a question set, exactly as a query would send them, so that a
model's replies to them can be recorded once and replayed offline (bench/planned_search.py).

    python bench/planning_prompts.py natural > prompts.jsonl
    python bench/planning_prompts.py dev --no-passages > prompts.jsonl   # without the first search

One JSON object a line: `id`, `corpus`, `question`, `variant` (`passages`: the prompt shows the
question's own first search, as a query does; `no-passages`: it does not), `system` and `user` (the
prompt's two parts). The indexes are bench/ranking.py's. A recorded reply goes into a JSONL file of
`id`, `question` and `search` (the reply as the model wrote it), which bench/planned_search.py takes
with --recordings.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)

from bench.common import SHARED  # noqa: E402
from bench.ranking import SETS, Indexes  # noqa: E402
from rag.answer.plan import planning_prompt  # noqa: E402
from rag.evaluation import load_questions  # noqa: E402
from rag.retrieval.retrieve import glance  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("set", choices=sorted(SETS))
    ap.add_argument("--no-passages", action="store_true", help="leave the first search's passages out")
    args = ap.parse_args(argv)
    file, root = SETS[args.set]
    indexes = Indexes()
    for q in load_questions(SHARED / file):
        index = indexes.get(args.set, root / str(q.corpus))
        seen = glance(index, q.question)
        if args.no_passages:
            seen = seen._replace(candidates=())
        prompt = planning_prompt(q.question, seen)
        row = {
            "id": q.id,
            "corpus": q.corpus,
            "question": q.question,
            "variant": "no-passages" if args.no_passages else "passages",
            "system": prompt.system,
            "user": prompt.user,
        }
        print(json.dumps(row, ensure_ascii=False))


if __name__ == "__main__":
    main()
