"""The first questions after a new index: a plain ingest of REPO, then N new questions, each a whole
`query.py --json --no-llm` process (a variant with settings: a process that answers as it does,
rag.retrieval.retrieve with the settings, its JSON printed), in turn with `python -c "import click"`
(the reference), for each variant of the semantic stage. No vector is cached when the first question
comes; each question is new.

    python bench/first_questions.py ~/.cache/rag-corpora/flask-3.1.3 --questions 12
    python bench/first_questions.py REPO --variants "default:,none:rerank=none,d20:DEPTH=20,both:DEPTH=20+PASSAGE_TOKENS=64"

Variants are separated by commas, each LABEL:SETTING=VALUE+...: `rerank=none` runs the query with --rerank none
(else --rerank auto: the stage runs when its extra is installed);
a SETTING that names a field of rag.weights.RankingWeights (or DEPTH, the semantic stage's depth as the
records name it) is passed to the query in its Request; PASSAGE_TOKENS, the model's, is set on
rag.semantic.model in the query's process before it runs.
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

# a query process: the variant's settings, then the retrieval `query --json --no-llm` runs, printed
_WITH = (
    "import sys\n"
    "import rag.semantic.model as m\n"
    "from rag.weights import DEFAULTS\n"
    "changes = {}\n"
    "for item in sys.argv.pop(1).split(','):\n"
    "    if item:\n"
    "        name, value = item.split('=')\n"
    "        if name == 'PASSAGE_TOKENS':\n"
    "            m.PASSAGE_TOKENS = int(value)\n"
    "        else:\n"
    "            changes['semantic_depth' if name == 'DEPTH' else name.lower()] = int(value)\n"
    "from rag.cli.output import format_hits_json\n"
    "from rag.cli.report import about\n"
    "from rag.retrieval.retrieve import Request, retrieve\n"
    "rerank, index, question = sys.argv[1:4]\n"
    "found = retrieve(index, Request(question, rerank=rerank, weights=DEFAULTS._replace(**changes)))\n"
    "sys.stdout.write(format_hits_json(question, found.hits, False, about(found)))\n"
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
        rerank = "none" if "rerank=none" in settings else "auto"
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
                if levers:
                    command = [sys.executable, "-c", _WITH, levers, rerank, str(index), question]
                else:
                    command = [sys.executable, str(PROJECT / "query.py"), "--json", "--no-llm", "-q"]
                    command += ["--rerank", rerank, "--index", str(index), question]
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
