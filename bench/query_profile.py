"""Where a lexical query's milliseconds go, as a whole process: start-up, imports, the index's
opening, postings, scoring, ranking, output.

    python bench/query_profile.py --index IDX [--index IDX ...] [--runs 11] [QUESTION ...]
    python bench/query_profile.py --imports 25 [--runs 11]

Each run is one process that asks `query --json --no-llm --rerank none` through the CLI, as
query.py does, with a timer around each stage (the time of a stage excludes the stages it calls:
numpy's import inside a postings read counts as the import). Times are CPU time, the process's
own (user + system), which other work on a shared machine changes far less than wall time: the
stages by time.process_time, the start-up (interpreter, site) by getrusage at the script's first
line, the exit by the kernel's account of the finished process (wait4) less what the script saw.
`python -c "import click"` and `python -c pass` run in turn with the queries, measured alike, so
every row can be read against them; the wall times are printed beside. Medians over --runs
processes of each question (by default two).

With --imports N, the imports instead, module by module: each process imports click, then what
query.py imports, then numpy as the search imports it, with the CPU time of each module's own code
taken (its imports excluded, as `python -X importtime` shows them in wall time); the N largest and
the totals by kind, medians over --runs processes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)

from bench.common import PROJECT, versions  # noqa: E402

QUESTIONS = [
    "how does the session cookie get signed",
    "where are the url routes matched against the request path",
]

# module, attribute, stage: every callable timed in the child, outermost first
STAGES = [
    ("rag.store.reader", "Index.__init__", "open the index"),
    ("rag.retrieval.retrieve", "check_index", "check the index (moved, access)"),
    ("rag.retrieval.search", "_query_counts", "the question's terms"),
    ("rag.store.reader", "Index.term", "read the postings"),
    ("rag.numeric", "numpy_or_none", "import numpy"),
    ("rag.retrieval.topk", "numpy_or_none", "import numpy"),  # where an older version took it by name
    ("rag.store.packing", "numpy_or_none", "import numpy"),
    ("rag.store.views", "View.column", "read the per-chunk arrays"),
    ("rag.retrieval.search", "top_scores", "add up the scores (top_scores)"),
    ("rag.store.reader", "Index.places", "read the candidates' places"),
    ("rag.store.reader", "Index.chunks", "read the candidates' texts"),
    ("rag.retrieval.search", "rank_hits", "rank the candidates"),
    ("rag.ranking.pipeline", "distinct_passages", "shape the passages"),
    ("rag.retrieval.retrieve", "changed_since_ingest", "freshness check"),
    ("rag.cli.commands", "format_hits_json", "format the JSON"),
    ("rag.cli.commands", "out", "write the output"),
]

_CHILD = r"""
import resource, time
begun = resource.getrusage(resource.RUSAGE_SELF)
started = time.process_time()
import json, sys
from importlib import import_module
sys.argv = ["query.py", *sys.argv[1:]]
spent = {}
stack = []

def timed(function, stage):
    def run(*args, **kwargs):
        stack.append(0.0)
        start = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            took = time.process_time() - start
            inner = stack.pop()
            spent[stage] = spent.get(stage, 0.0) + took - inner
            if stack:
                stack[-1] += took
    return run

import rag.cli.commands, rag.retrieval.retrieve, rag.answer.ask  # what query.py imports before asking
imported = time.process_time()
for module, attribute, stage in STAGES:
    owner = import_module(module)
    *path, name = attribute.split(".")
    for part in path:
        owner = getattr(owner, part)
    if hasattr(owner, name):  # a version without it: not timed
        setattr(owner, name, timed(getattr(owner, name), stage))
patched = time.process_time()
try:
    rag.cli.commands.query_main()
except SystemExit as exc:
    if exc.code:
        raise
done = time.process_time()
spent["imports (rag, click and what they import)"] = imported - started
spent["the rest: the command line, the search's own code"] = done - patched - sum(
    v for k, v in spent.items() if not k.startswith("imports")
)
with open(REPORT, "w") as report:
    json.dump(
        {"start": begun.ru_utime + begun.ru_stime, "script": done - started - (patched - imported), "spent": spent},
        report,
    )
"""


def child_code(report: Path) -> str:
    return f"STAGES = {STAGES!r}\nREPORT = {str(report)!r}\n" + _CHILD


def run(args: list[str], cwd: Path) -> tuple[float, float]:
    """Run a command to its end, its output discarded; (wall seconds, CPU seconds) by wait4."""
    start = time.perf_counter()
    proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    error = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(args[:2])} ...: {error.decode()[-500:]}")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def profile(index: Path, questions: list[str], runs: int, root: Path) -> None:
    """Run the query `runs` times per question, in turn with `import click` and `pass`; print medians."""
    py = sys.executable
    walls, cpus, clicks, passes = [], [], [], []
    stages: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        report_file = Path(tmp) / "report.json"
        code = child_code(report_file)
        for _ in range(runs):
            for q in questions:
                wall, cpu = run(
                    [py, "-c", code, "--json", "--no-llm", "--rerank", "none", "--index", str(index), q], root
                )
                report = json.loads(report_file.read_text())
                walls.append(wall)
                cpus.append(cpu)
                stages.setdefault("start-up (interpreter, site)", []).append(report["start"])
                for stage, seconds in report["spent"].items():
                    stages.setdefault(stage, []).append(seconds)
                stages.setdefault("exit", []).append(cpu - report["start"] - report["script"])
                clicks.append(run([py, "-c", "import click"], root))
                passes.append(run([py, "-c", "pass"], root))
    cpu, click_cpu = statistics.median(cpus), statistics.median(c for _, c in clicks)
    wall, click_wall = statistics.median(walls), statistics.median(w for w, _ in clicks)
    print(f"\n{index}: {len(questions)} questions x {runs} processes, CPU ms (wall ms)")
    print(
        f"whole process {cpu * 1000:.0f} ({wall * 1000:.0f}); `import click` {click_cpu * 1000:.0f} "
        f"({click_wall * 1000:.0f}): {cpu / click_cpu:.2f} x ({wall / click_wall:.2f} x); `pass` "
        f"{statistics.median(c for _, c in passes) * 1000:.0f} ({statistics.median(w for w, _ in passes) * 1000:.0f})"
    )
    order = ["start-up (interpreter, site)", "imports (rag, click and what they import)"]
    order += list(dict.fromkeys(s for _, _, s in STAGES))
    order += ["the rest: the command line, the search's own code", "exit"]
    for stage in order:
        if stage in stages:
            values = stages[stage] + [0.0] * (len(cpus) - len(stages[stage]))  # a stage not reached: 0
            print(f"  {stage:<52} {statistics.median(values) * 1000:7.1f}")


# a meta path finder that times each module's execution (CPU), its own imports excluded
_IMPORTS_CHILD = r"""
import json, sys, time
spent, stack = {}, []

class Timed:
    def __init__(self, loader, name):
        self.loader, self.name = loader, name
    def create_module(self, spec):
        return self.loader.create_module(spec)
    def exec_module(self, module):
        stack.append(0.0)
        start = time.process_time()
        try:
            self.loader.exec_module(module)
        finally:
            took = time.process_time() - start
            inner = stack.pop()
            spent[self.name] = spent.get(self.name, 0.0) + took - inner
            if stack:
                stack[-1] += took

class Finder:
    def find_spec(self, name, path, target=None):
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = Timed(spec.loader, name)
                return spec
        return None

sys.meta_path.insert(0, Finder())
marks = [time.process_time()]
import click
marks.append(time.process_time())
clicks = set(spent)
import rag.cli.commands, rag.retrieval.retrieve, rag.answer.ask
marks.append(time.process_time())
queries = set(spent) - clicks
import rag.numeric
rag.numeric.numpy_or_none()
marks.append(time.process_time())
kind = {m: "click" if m in clicks else "query" if m in queries else "numpy" for m in spent}
totals = {"click": marks[1] - marks[0], "query": marks[2] - marks[1], "numpy": marks[3] - marks[2]}
print(json.dumps({"spent": spent, "kind": kind, "totals": totals}))
"""


def imports(runs: int, top: int, root: Path) -> None:
    """Print the CPU time of the query's imports by module: the `top` largest, and the totals."""
    spent: dict[str, list[float]] = {}
    kinds: dict[str, str] = {}
    totals: dict[str, list[float]] = {}
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-c", _IMPORTS_CHILD], cwd=root, capture_output=True, text=True, check=True
        )
        report = json.loads(done.stdout)
        for module, seconds in report["spent"].items():
            spent.setdefault(module, []).append(seconds)
        kinds.update(report["kind"])
        for name, seconds in report["totals"].items():
            totals.setdefault(name, []).append(seconds)
    ms = {m: statistics.median(v + [0.0] * (runs - len(v))) * 1000 for m, v in spent.items()}
    print(f"\nimports, CPU ms, medians of {runs} processes (with the timing hook's own cost)")
    print(
        f"  import click {statistics.median(totals['click']) * 1000:.1f}; then what query.py imports "
        f"{statistics.median(totals['query']) * 1000:.1f}; then numpy {statistics.median(totals['numpy']) * 1000:.1f}"
    )
    for kind in ("query", "numpy"):
        own = {m: t for m, t in ms.items() if kinds[m] == kind}
        rag = sum(t for m, t in own.items() if m == "rag" or m.startswith("rag."))
        print(f"  {kind}: {len(own)} modules, {sum(own.values()):.1f} ms of their own code (rag's {rag:.1f})")
    print(f"  the {top} largest (after click's):")
    largest = sorted(((t, m) for m, t in ms.items() if kinds[m] != "click"), reverse=True)[:top]
    for t, m in largest:
        print(f"    {t:6.2f}  {m}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, action="append", default=[])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument(
        "--root", type=Path, default=PROJECT, help="the checkout whose rag/ runs (another version's copy)"
    )
    parser.add_argument(
        "--imports", type=int, metavar="N", help="the imports by module instead: the N largest"
    )
    parser.add_argument("questions", nargs="*", default=QUESTIONS)
    args = parser.parse_args()
    if not args.index and args.imports is None:
        parser.error("give --index IDX, or --imports N")
    print(versions(), "| load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    if args.imports is not None:
        imports(args.runs, args.imports, args.root)
    for index in args.index:
        profile(index, args.questions, args.runs, args.root)
    print("\nload average at the end: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
