"""Whole answered questions, offline: the planning call, each answer turn and the model's own
searches go through the product's answering path (rag.answer.ask, the SDK backend) against a
loopback Messages API that answers from recorded model turns.

    python bench/answer_rounds.py run --setup followups           # every sampled question
    python bench/answer_rounds.py pending --setup followups       # questions whose next turn is unrecorded
    python bench/answer_rounds.py show --setup followups --id n004   # that turn's exact request, readably
    python bench/answer_rounds.py reply --setup followups --id n004 --search "WORDS"   # record a turn...
    python bench/answer_rounds.py reply --setup followups --id n004 --answer-file FILE  # ...and go on
    python bench/answer_rounds.py report --setups single-before,single,followups
    python bench/answer_rounds.py packets --setups single-before,single,followups --out DIR
    python bench/answer_rounds.py verdicts --packets DIR

Recording: a turn nobody has recorded yet stops its question; `show` prints the request exactly as
the product sent it (system prompt, tool definition, documents, question, earlier turns and tool
results), for a Claude model to play the model on it, and only on it (never the labels or the
code); `reply` records what it wrote and runs the question on to its next turn. The planning call
is served from bench/data/searches/ (rag's own planning prompt, recorded).

Setups: `single-before` (one round, the system prompt before the rule on claims, kept in
bench/data/answers/system-before.md), `single` (one round, today's prompt: --follow-ups 0),
`followups` (today's prompt, the model may search twice: the default).

Each run writes, per question, the answer, its citations (checked), each search and its passages,
the model calls and the characters of every request, to ${RAG_BENCH_ANSWERS:-~/.cache/rag-bench/answers}.
The model's searches (keywords) are in bench/data/answers/SETUP.jsonl; the answers' texts stay in
the cache (they quote the corpora's code). `packets` writes, per question, the answers of several
setups in a random order under neutral labels, for a reviewer blind to the setup (the rubric is in
docs/benchmarks.md); `verdicts` maps the reviewers' verdicts back and prints the table.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import random
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path[0] = str(Path(__file__).resolve().parent.parent)

from bench.common import SHARED  # noqa: E402
from bench.messages_api import ReplayApi, answer_stream, load_recordings, tool_stream  # noqa: E402
from bench.ranking import INDEXES, SETS, Indexes  # noqa: E402
from rag.answer.ask import Planning, ask  # noqa: E402
from rag.answer.backends import AnthropicBackend  # noqa: E402
from rag.evaluation import load_questions  # noqa: E402
from rag.retrieval.retrieve import Request  # noqa: E402

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "answers"
CACHE = Path(os.environ.get("RAG_BENCH_ANSWERS", Path.home() / ".cache" / "rag-bench" / "answers"))
SETUPS = {"single-before": (0, "system-before.md"), "single": (0, None), "followups": (2, None)}
NOT_RECORDED = "not recorded"


def sample() -> list[tuple[str, Any]]:
    """The questions measured: natural's 3 of each repository's 8 (its 1st, 4th and 7th), dev's 3 of
    each corpus's 6 (its 1st, 3rd and 5th): 48 questions, 24 a set."""
    out = []
    for set_name, picks in (("natural", (0, 3, 6)), ("dev", (0, 2, 4))):
        questions = load_questions(SHARED / SETS[set_name][0])
        by_corpus: dict[str, list[Any]] = {}
        for q in questions:
            by_corpus.setdefault(str(q.corpus), []).append(q)
        for group in by_corpus.values():
            out.extend((set_name, group[i]) for i in picks if i < len(group))
    return out


def turns_file(setup: str, qid: str) -> Path:
    return CACHE / setup / f"{qid}.turns.json"


def load_turns(setup: str, qid: str) -> list[dict[str, str]]:
    path = turns_file(setup, qid)
    return json.loads(path.read_text()) if path.exists() else []


def question_of(body: dict[str, Any], questions: list[str]) -> str | None:
    """The sampled question an answer request asks (its first message holds it verbatim)."""
    first = body["messages"][0]["content"]
    text = "\n".join(c.get("text", "") for c in first if isinstance(c, dict) and c.get("type") == "text")
    return next((q for q in sorted(questions, key=len, reverse=True) if q in text), None)


def readable(body: dict[str, Any]) -> str:
    """An answer request as the model reads it: system prompt, tools, then each message's blocks."""
    out = ["=== system ===", body["system"]]
    for tool in body.get("tools", []):
        out += [
            f"=== tool: {tool['name']} (tool_choice {json.dumps(body.get('tool_choice'))}) ===",
            tool["description"],
            "input schema: " + json.dumps(tool["input_schema"]),
        ]
    for message in body["messages"]:
        out.append(f"=== {message['role']} ===")
        content = message["content"]
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            out.extend(_block_text(block))
    return "\n".join(out)


def _block_text(block: dict[str, Any]) -> list[str]:
    kind = block.get("type")
    if kind == "document":
        context = f" (context: {block['context']})" if block.get("context") else ""
        return [
            f"--- document: {block['title']}{context} ---",
            block["source"]["data"],
            "--- end of document ---",
        ]
    if kind == "text":
        return [block["text"]]
    if kind == "tool_use":
        return [f"[you called {block['name']} with {json.dumps(block['input'])}]"]
    if kind == "tool_result":
        content = block.get("content")
        lines = [f"--- tool result{' (error)' if block.get('is_error') else ''} ---"]
        for inner in [{"type": "text", "text": content}] if isinstance(content, str) else content or []:
            lines.extend(_block_text(inner))
        return lines
    return [json.dumps(block)]


@contextmanager
def templates(system_file: str | None) -> Iterator[None]:
    """The product's prompt templates, the system prompt replaced by `system_file` of DATA if given."""
    import rag.answer.prompts as prompts

    if system_file is None:
        yield
        return
    before = prompts.TEMPLATES
    with tempfile.TemporaryDirectory() as tmp:
        for f in before.iterdir():
            shutil.copy(f, tmp)
        shutil.copy(DATA / system_file, Path(tmp) / "system.md")
        prompts.TEMPLATES = Path(tmp)
        prompts.template.cache_clear()
        try:
            yield
        finally:
            prompts.TEMPLATES = before
            prompts.template.cache_clear()


def run(setup: str, only: set[str] | None = None, quiet: bool = False) -> dict[str, str]:
    """Run the sampled questions (or `only`) through the answering path; return each one's state:
    `done`, or `pending` (its next turn is not recorded)."""
    follow_ups, system_file = SETUPS[setup]
    chosen = [(s, q) for s, q in sample() if only is None or q.id in only]
    plans = load_recordings(sorted((HERE / "data" / "searches").glob("*.passages.jsonl")))
    by_text = {q.question: q.id for _, q in chosen}
    requests: dict[str, list[dict[str, Any]]] = {}

    def turns(body: dict[str, Any]) -> tuple[int, str, bytes]:
        question = question_of(body, list(by_text))
        if question is None:
            return (
                404,
                "application/json",
                b'{"type":"error","error":{"type":"not_found_error","message":"?"}}',
            )
        qid = by_text[question]
        requests.setdefault(qid, []).append(body)
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        recorded = load_turns(setup, qid)
        if turn >= len(recorded):
            (CACHE / setup).mkdir(parents=True, exist_ok=True)
            (CACHE / setup / f"{qid}.pending.json").write_text(json.dumps(body, ensure_ascii=False))
            error = {"type": "error", "error": {"type": "invalid_request_error", "message": NOT_RECORDED}}
            return 400, "application/json", json.dumps(error).encode()
        reply = recorded[turn]
        if "search" in reply:
            return 200, "text/event-stream", tool_stream(reply["search"], use_id=f"toolu_{turn}")
        return 200, "text/event-stream", answer_stream(reply["answer"])

    states: dict[str, str] = {}
    indexes = Indexes()
    with templates(system_file), ReplayApi(plans, turns=turns) as api:
        import anthropic

        from rag.errors import BackendError

        backend = AnthropicBackend(
            client=anthropic.Anthropic(base_url=api.url, api_key="offline", max_retries=0)
        )
        for set_name, q in chosen:
            root = SETS[set_name][1]
            indexes.get(set_name, root / str(q.corpus))
            index = INDEXES / f"{'codesearch' if set_name == 'natural' else set_name}-{q.corpus}.idx"
            pending = CACHE / setup / f"{q.id}.pending.json"
            pending.unlink(missing_ok=True)
            try:
                outcome = ask(
                    index,
                    Request(q.question, rerank="none"),
                    backend,
                    planning=Planning(backend),
                    follow_ups=follow_ups,
                )
            except BackendError as exc:
                if NOT_RECORDED not in str(exc):
                    raise
                states[q.id] = "pending"
                continue
            states[q.id] = "done"
            write_result(setup, set_name, q, outcome, requests.get(q.id, []))
    if not quiet:
        done = sum(1 for s in states.values() if s == "done")
        print(
            f"{setup}: {done} of {len(states)} answered; pending: {' '.join(k for k, s in states.items() if s != 'done')}"
        )
    return states


def write_result(setup: str, set_name: str, q: Any, outcome: Any, bodies: list[dict[str, Any]]) -> None:
    """What one answered question came to, for the report and the reviewers."""
    answer = outcome.answer

    def passage(h: Any) -> dict[str, Any]:
        p = h.passage
        return {
            "path": p.path,
            "start_line": p.start_line,
            "end_line": p.end_line,
            "symbol": h.chunk.symbol,
            "text": p.text,
        }

    gold = [(a.path, a.start_line, a.end_line) for a in q.answers]

    def has_gold(hits: Any) -> bool:
        return any(
            h.passage.path == path and h.passage.start_line <= end and start <= h.passage.end_line
            for h in hits
            for path, start, end in gold
        )

    result = {
        "id": q.id,
        "set": set_name,
        "corpus": str(q.corpus),
        "root": str(SETS[set_name][1] / str(q.corpus)),
        "question": q.question,
        "answer": answer.text,
        "citations": [c._asdict() for c in answer.citations],
        "first": [passage(h) for h in answer.hits],
        "rounds": [
            {"search": r.search, "error": r.error, "passages": [passage(h) for h in r.hits]}
            for r in answer.rounds
        ],
        "calls": answer.calls,
        "answer_calls": len(bodies),
        "request_chars": [len(json.dumps(b, ensure_ascii=False)) for b in bodies],
        "gold_in_first": has_gold(answer.hits),
        "gold_sent": has_gold(answer.sent),
        "plan": list(outcome.retrieval.searches),
    }
    (CACHE / setup / f"{q.id}.result.json").write_text(json.dumps(result, ensure_ascii=False, indent=1))
    searches = [t["search"] for t in load_turns(setup, q.id) if "search" in t]
    record = DATA / f"{setup}.jsonl"
    with (CACHE / setup / ".record.lock").open("w") as lock:  # several players record at once
        fcntl.flock(lock, fcntl.LOCK_EX)
        rows = (
            {json.loads(line)["id"]: line for line in record.read_text().splitlines()}
            if record.exists()
            else {}
        )
        rows[q.id] = json.dumps({"id": q.id, "searches": searches}, ensure_ascii=False)
        record.write_text("".join(rows[k] + "\n" for k in sorted(rows)))


def show(setup: str, qid: str) -> None:
    pending = CACHE / setup / f"{qid}.pending.json"
    if not pending.exists():
        sys.exit(f"{qid}: no pending turn in {setup} (run it first: `run --setup {setup} --ids {qid}`)")
    print(readable(json.loads(pending.read_text())))


def reply(setup: str, qid: str, search: str | None, answer: str | None) -> None:
    turns = load_turns(setup, qid)
    turns.append({"search": " ".join(search.split())} if search is not None else {"answer": answer or ""})
    turns_file(setup, qid).parent.mkdir(parents=True, exist_ok=True)
    before = turns_file(setup, qid).read_text() if turns_file(setup, qid).exists() else None
    turns_file(setup, qid).write_text(json.dumps(turns, ensure_ascii=False, indent=1))
    try:
        state = run(setup, {qid}, quiet=True)[qid]
    except BaseException:  # a turn is recorded only once the question ran with it
        if before is None:
            turns_file(setup, qid).unlink()
        else:
            turns_file(setup, qid).write_text(before)
        raise
    if state == "pending":
        print(f"recorded turn {len(turns)}; the next turn's request:\n")
        show(setup, qid)
    else:
        print(f"recorded turn {len(turns)}; {qid} is answered ({len(turns)} turns)")


def results(setup: str) -> dict[str, dict[str, Any]]:
    out = {}
    for path in sorted((CACHE / setup).glob("*.result.json")):
        r = json.loads(path.read_text())
        out[r["id"]] = r
    return out


def report(setups: list[str]) -> None:
    """Per setup: questions answered, searches made, model calls, characters sent, answers with the
    labelled passage sent; per question the searches made."""
    print(
        "| setup | answered | searched (questions) | searches | median model calls | mean chars sent per answer call | labelled passage sent: first 4 / all |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for setup in setups:
        rs = results(setup)
        if not rs:
            print(f"| {setup} | 0 | | | | | |")
            continue
        searched = sum(1 for r in rs.values() if r["rounds"])
        searches = sum(len(r["rounds"]) for r in rs.values())
        calls = sorted(r["calls"] for r in rs.values())
        chars = [c for r in rs.values() for c in r["request_chars"]]
        first = sum(r["gold_in_first"] for r in rs.values())
        sent = sum(r["gold_sent"] for r in rs.values())
        print(
            f"| {setup} | {len(rs)} | {searched} | {searches} | {calls[len(calls) // 2]} | "
            f"{sum(chars) / len(chars):,.0f} | {first} / {sent} |"
        )
    for setup in setups:
        rs = results(setup)
        if not any(r["rounds"] for r in rs.values()):
            continue
        print(f"\n{setup}, per question:\n")
        print("| question | searches | passages sent | characters sent (all answer calls) | model calls |")
        print("| --- | --- | --- | --- | --- |")
        for qid, r in rs.items():
            passages = len(r["first"]) + sum(len(rnd["passages"]) for rnd in r["rounds"])
            words = "; ".join(f"`{rnd['search']}`" for rnd in r["rounds"]) or "none"
            print(f"| {qid} | {words} | {passages} | {sum(r['request_chars']):,} | {r['calls']} |")


def packets(setups: list[str], out: Path, seed: int = 7, only: set[str] | None = None) -> None:
    """One packet a question: the question, where its repository is, and each setup's answer with
    the passages it was sent, under labels A, B, C... in a random order; the key goes apart."""
    rng = random.Random(seed)
    all_results = {s: results(s) for s in setups}
    common = sorted(set.intersection(*(set(r) for r in all_results.values())))
    common = [q for q in common if only is None or q in only]
    out.mkdir(parents=True, exist_ok=True)
    key: dict[str, dict[str, str]] = {}
    for qid in common:
        order = setups[:]
        rng.shuffle(order)
        labels = {chr(ord("A") + i): s for i, s in enumerate(order)}
        key[qid] = labels
        base = all_results[order[0]][qid]
        lines = [f"# Question {qid}", "", base["question"], "", f"Repository: {base['root']}", ""]
        for label, setup in labels.items():
            r = all_results[setup][qid]
            lines += [f"## Answer {label}", "", r["answer"], "", f"### Passages answer {label} was sent", ""]
            for p in r["first"] + [p for rnd in r["rounds"] for p in rnd["passages"]]:
                lines += [
                    f"#### {p['path']}:{p['start_line']}-{p['end_line']} {p['symbol'] or ''}",
                    "```",
                    p["text"],
                    "```",
                    "",
                ]
        (out / f"{qid}.md").write_text("\n".join(lines))
    (out.parent / f"{out.name}.key.json").write_text(json.dumps(key, indent=1))
    print(f"{len(common)} packets in {out}; key in {out.parent / (out.name + '.key.json')}")


VERDICTS = ("full", "partial", "wrong", "not answered", "refused")


def verdicts(packet_dir: Path) -> None:
    """Map each reviewer's verdicts (PACKETS/QID.verdict.json: {"A": {"verdict", "unsupported_claims",
    "bad_citations", "missing", "notes"}, ...}) back to the setups and print the table."""
    key = json.loads((packet_dir.parent / f"{packet_dir.name}.key.json").read_text())
    table: dict[str, dict[str, Any]] = {}
    per_question: dict[str, dict[str, str]] = {}
    for qid, labels in sorted(key.items()):
        path = packet_dir / f"{qid}.verdict.json"
        if not path.exists():
            continue
        given = json.loads(path.read_text())
        for label, setup in labels.items():
            v = given[label]
            row = table.setdefault(setup, {"n": 0, **{k: 0 for k in VERDICTS}, "unsupported": 0, "bad": 0})
            row["n"] += 1
            row[v["verdict"]] += 1
            row["unsupported"] += int(v.get("unsupported_claims", 0))
            row["bad"] += int(v.get("bad_citations", 0))
            per_question.setdefault(qid, {})[setup] = v["verdict"]
    print("| setup | judged | " + " | ".join(VERDICTS) + " | claims no passage supports | bad citations |")
    print("| --- " * (len(VERDICTS) + 4) + "|")
    for setup, row in table.items():
        print(
            f"| {setup} | {row['n']} | "
            + " | ".join(str(row[k]) for k in VERDICTS)
            + f" | {row['unsupported']} | {row['bad']} |"
        )
    setups = list(table)
    for a in setups:
        for b in setups:
            if a != b:
                worse = [
                    q
                    for q, v in per_question.items()
                    if v.get(a) == "full" and v.get(b) not in (None, "full")
                ]
                if worse:
                    print(f"full in {a}, not in {b}: {' '.join(worse)}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    for name in ("run", "pending", "show", "reply"):
        p = sub.add_parser(name)
        p.add_argument("--setup", choices=SETUPS, required=True)
        p.add_argument("--id" if name in ("show", "reply") else "--ids", required=name in ("show", "reply"))
        if name == "reply":
            p.add_argument("--search")
            p.add_argument("--answer-file", type=Path)
    p = sub.add_parser("report")
    p.add_argument("--setups", default=",".join(SETUPS))
    p = sub.add_parser("packets")
    p.add_argument("--setups", default=",".join(SETUPS))
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--ids", help="only these questions (comma-separated)")
    p = sub.add_parser("verdicts")
    p.add_argument("--packets", type=Path, required=True)
    args = ap.parse_args(argv)
    if args.command == "run":
        run(args.setup, set(args.ids.split(",")) if args.ids else None)
    elif args.command == "pending":
        print(" ".join(sorted(p.name.split(".")[0] for p in (CACHE / args.setup).glob("*.pending.json"))))
    elif args.command == "show":
        show(args.setup, args.id)
    elif args.command == "reply":
        if (args.search is None) == (args.answer_file is None):
            sys.exit("reply takes --search WORDS or --answer-file FILE")
        answer = args.answer_file.read_text(encoding="utf-8") if args.answer_file else None
        reply(args.setup, args.id, args.search, answer)
    elif args.command == "report":
        report(args.setups.split(","))
    elif args.command == "packets":
        packets(args.setups.split(","), args.out, only=set(args.ids.split(",")) if args.ids else None)
    else:
        verdicts(args.packets)


if __name__ == "__main__":
    main()
