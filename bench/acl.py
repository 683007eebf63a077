"""Access lists on a real corpus: a caller's hits and scores equal those of an index without
the files it may not read.

    python bench/acl.py [--corpus flask-3.1.3] [--restrict docs/:writers,tests/:qa]

Copies the corpus into a temp dir with a .rag-access file restricting some folders (gitignore
patterns: `tests/` means every folder named tests), and for each caller a copy that lacks the
files the rules deny that caller. For every caller (no group, each group, all groups)
it runs every dev and docstring question of the corpus (top 10) against both and counts the
questions whose hits or scores differ (scores compared to the last bit); then `rag eval` as that
caller against the reference's eval (metrics, labelling errors, unscored questions), and the
stale-index note after a file is added to every indexed folder of the corpus.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from itertools import combinations
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)
from bench.common import CORPORA, SHARED, versions  # noqa: E402
from rag import Index, ingest, search  # noqa: E402
from rag.evaluation import load_questions, report_dict, run_eval  # noqa: E402
from rag.retrieval.retrieve import Request, retrieve  # noqa: E402
from rag.sources.access import AccessList, can_read  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="flask-3.1.3")
    parser.add_argument("--restrict", default="docs/:writers,tests/:qa")
    args = parser.parse_args()
    rules = [tuple(r.split(":")) for r in args.restrict.split(",")]
    groups = sorted({g for _, g in rules})
    labelled = [
        q
        for f in ("dev-questions.jsonl", "docstring-queries.jsonl")
        for q in load_questions(SHARED / f)
        if q.corpus == args.corpus
    ]
    questions = [q.question for q in labelled]
    print(versions())
    with tempfile.TemporaryDirectory() as tmp:
        full = Path(tmp) / "full"
        shutil.copytree(CORPORA / args.corpus, full, ignore=shutil.ignore_patterns(".rag"))
        (full / ".rag-access").write_text("".join(f"{pattern} {group}\n" for pattern, group in rules))
        start = time.perf_counter()
        acl_index = ingest(full).index_path
        acl = AccessList.load(full)
        print(
            f"{args.corpus}: {len(questions)} questions; ACL index built in {time.perf_counter() - start:.1f} s; "
            f"rules: {', '.join(f'{p} -> {g}' for p, g in rules)}"
        )
        callers = [frozenset(c) for n in range(len(groups) + 1) for c in combinations(groups, n)]
        notes: list[tuple[frozenset[str], Path, Path]] = []
        for caller in callers:
            ref = Path(tmp) / f"ref-{'-'.join(sorted(caller)) or 'public'}"
            shutil.copytree(full, ref, ignore=shutil.ignore_patterns(".rag", ".rag-access"))
            removed = 0
            for path in sorted(p for p in ref.rglob("*") if p.is_file()):
                if not can_read(acl.groups_of(path.relative_to(ref).as_posix()), caller):
                    path.unlink()  # the reference simply lacks what the caller may not read
                    removed += 1
            ref_index = ingest(ref).index_path
            differ = 0
            with Index(acl_index) as a, Index(ref_index) as b:
                for q in questions:
                    got = [
                        (h.chunk.path, h.chunk.start_line, h.score) for h in search(a, q, 10, groups=caller)
                    ]
                    want = [(h.chunk.path, h.chunk.start_line, h.score) for h in search(b, q, 10)]
                    if got != want and not differ:
                        example = (q, got, want)
                    differ += got != want
                n_chunks = a.view(caller).n_chunks
            if differ:
                q, got, want = example
                print(f"    first difference: {q!r}")
                for g, w in zip(got, want):
                    print(f"      {g}  |  {w}")
            print(
                f"  caller {sorted(caller) or '(no group)'}: sees {n_chunks} chunks ({removed} files hidden); "
                f"{len(questions) - differ}/{len(questions)} questions with identical hits and scores"
            )
            qfile = Path(tmp) / "questions.jsonl"
            qfile.write_text(
                "".join(
                    json.dumps(
                        {
                            "id": f"q{i}",
                            "question": q.question,
                            "answers": [
                                {"path": a.path, "start_line": a.start_line, "end_line": a.end_line}
                                for a in q.answers
                            ],
                        }
                    )
                    + "\n"
                    for i, q in enumerate(labelled)
                )
            )
            got_eval = report_dict(run_eval(qfile, acl_index, groups=caller, rerank="none"), misses=True)
            want_eval = report_dict(run_eval(qfile, ref_index, rerank="none"), misses=True)
            got_eval.pop("indexes"), want_eval.pop("indexes")
            print(
                f"    eval as the caller {'equals' if got_eval == want_eval else 'DIFFERS from'} eval on the reference "
                f"({len(got_eval['label_errors'])} labelling errors, {len(got_eval['unscored'])} unscored)"
            )
            notes.append((caller, ref, ref_index))
        # the stale note: a new file in every folder of both trees (the reference has only its own)
        for tree in {Path(tmp) / "full", *(r for _, r, _ in notes)}:
            for folder in {p.parent for p in tree.rglob("*") if p.is_file() and ".rag" not in p.parts}:
                (folder / "zz-new-file.txt").write_text("added after ingest\n")
        for caller, _, ref_index in notes:
            got_note = retrieve(acl_index, Request("nosuchwordanywhere", groups=caller)).changed
            want_note = retrieve(ref_index, Request("nosuchwordanywhere")).changed
            print(
                f"  caller {sorted(caller) or '(no group)'}: stale note names {len(got_note)} folders, "
                f"{'as' if sorted(got_note) == sorted(want_note) else 'NOT as'} the reference's {len(want_note)}"
            )


if __name__ == "__main__":
    main()
