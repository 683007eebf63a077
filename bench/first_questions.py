"""The first questions after a new index: a plain ingest of REPO, then N new questions, each a whole
`query.py --json --no-llm` process, in turn with `python -c "import click"` (the reference), for each
variant of the semantic stage. No vector is cached when the first question comes; each question is new.

    python bench/first_questions.py ~/.cache/rag-corpora/flask-3.1.3 --questions 12
    python bench/first_questions.py REPO --variants "default:,none:rerank=none,d20:DEPTH=20,both:DEPTH=20+PASSAGE_TOKENS=64"

Variants are separated by commas, each LABEL:SETTING=VALUE+...: `rerank=none` runs the query with --rerank none; DEPTH is
rag.ranking.semantic's, PASSAGE_TOKENS rag.semantic.model's (set in the query's process before it runs).
For each: the median and the slowest ratio of a question's time to the reference's in the same pair.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)

from bench.common import PROJECT, run_isolated  # noqa: E402

QUESTIONS = [
    "how does the session cookie get signed",
    "where are blueprints registered on the app",
    "what happens when a view returns a tuple",
    "how is the request context pushed and popped",
    "where does the json provider sort keys",
    "how are url rules matched to endpoints",
    "what does the debug flag do",
    "how are static files served and cached",
    "where are config values loaded from environment variables",
    "how does test client follow redirects",
    "what signals are sent before a request",
    "how are errors turned into responses",
    "where is the secret key used",
    "how does the cli find the application",
    "what does url_for do with external urls",
    "how are templates rendered with context processors",
]

# a query process with the semantic stage's settings changed before the command runs
_WITH = (
    "import sys\n"
    "import rag.semantic.model as m, rag.ranking.semantic as r\n"
    "for item in sys.argv.pop(1).split(','):\n"
    "    if item:\n"
    "        name, value = item.split('=')\n"
    "        setattr(m if hasattr(m, name) else r, name, int(value))\n"
    "from rag.cli import query_main\n"
    "sys.argv[0] = 'query.py'\n"
    "query_main()\n"
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("repo", type=Path)
    ap.add_argument("--questions", type=int, default=12)
    ap.add_argument("--variants", default="default:,none:rerank=none")
    args = ap.parse_args()
    reference = [sys.executable, "-c", "import click"]
    variants = []
    for item in (v for v in args.variants.split(",") if v):
        label, _, spec = item.partition(":")
        settings = [s for s in spec.split("+") if s]
        rerank = "none" if "rerank=none" in settings else "semantic"
        levers = ",".join(s for s in settings if not s.startswith("rerank="))
        variants.append((label, rerank, levers))
    for label, rerank, levers in variants:
        with tempfile.TemporaryDirectory() as work:
            index = Path(work) / "index.sqlite"
            subprocess.run(
                [sys.executable, str(PROJECT / "ingest.py"), str(args.repo), "--index", str(index), "-q"],
                check=True,
            )
            ratios, seconds = [], []
            for question in QUESTIONS[: args.questions]:
                command = [
                    sys.executable,
                    "-c",
                    _WITH,
                    levers,
                    "--json",
                    "--no-llm",
                    "--rerank",
                    rerank,
                    "--index",
                    str(index),
                    question,
                ]
                asked = run_isolated(command)
                base = run_isolated(reference)
                ratios.append(asked.seconds / base.seconds)
                seconds.append(asked.seconds)
            print(
                f"{label:10} {len(ratios)} new questions: median {statistics.median(seconds) * 1000:.0f} ms, "
                f"{statistics.median(ratios):.1f} x import click, slowest {max(ratios):.1f} x",
                flush=True,
            )


if __name__ == "__main__":
    main()
