"""`rag eval` as text: the metrics table and the misses, each with what came back instead."""

from __future__ import annotations

from rag.cli.terminal import one_line
from rag.evaluation import EVAL_DEPTH, MAX_PASSAGE_CHARS, EvalReport, Metrics


def format_table(report: EvalReport) -> str:
    """Return the metrics as a table: one row per corpus, then overall, then any labelling errors."""
    rows = [*report.per_corpus.items(), ("overall", report.overall)]
    width = max(len("corpus"), *(len(name) for name, _ in rows))
    header = f"{'corpus':<{width}}  questions  hit@1  hit@4  hit@10  MRR@10  top-4 chars  match hit@4  MRR@10"
    over = False

    def row(name: str, m: Metrics) -> str:
        nonlocal over
        flag = " !" if m.mean_top4_chars > MAX_PASSAGE_CHARS else ""
        over = over or bool(flag)
        return (
            f"{name:<{width}}  {m.questions:>9}  {m.hit_at_1:.3f}  {m.hit_at_4:.3f}  {m.hit_at_10:>6.3f}"
            f"  {m.mrr_at_10:>6.3f}  {m.mean_top4_chars:>11,.0f}  {m.match_hit_at_4:>11.3f}  "
            f"{m.match_mrr_at_10:>6.3f}{flag}"
        )

    lines = [header]
    if report.per_corpus:
        lines.extend(row(name, m) for name, m in report.per_corpus.items())
        lines.append("-" * len(header))
    lines.append(row("overall", report.overall))
    if report.semantic:
        lines.append("Ranked lexically, then by the semantic rerank (--rerank none: the lexical order alone)")
    lines.append("A passage counts by the lines it shows; match: by the lines that matched alone")
    if over:
        lines.append(f"! top-4 passages average over the {MAX_PASSAGE_CHARS:,}-character budget")
    if report.label_errors:
        n_q = len({e.id for e in report.label_errors})
        lines.append(
            f"Labelling errors: {len(report.label_errors)} answer path(s) in {n_q} question(s) are not in "
            f"the index; {len(report.unscored)} question(s) not scored:"
        )
        lines.extend(
            f"  {one_line(e.id)} (line {e.line}): {one_line(e.answer.path)}:{e.answer.start_line}-{e.answer.end_line}"
            for e in report.label_errors
        )
    return "\n".join(lines)


def format_misses(report: EvalReport) -> str:
    """Return each question not found in the top k, its answers, and what came back instead, with why."""
    misses = report.misses
    out = [f"Misses: {len(misses)} of {len(report.outcomes)} questions have no hit in the top {report.k}."]
    for o in misses:
        q = o.question
        found = f"first hit at rank {o.rank}" if o.rank else f"no hit in the top {EVAL_DEPTH}"
        corpus = f" [{q.corpus}]" if q.corpus else ""
        out.append(f"\n{q.id}{corpus} (line {q.line}, {found}): {q.question}")
        out.extend(f"  answer: {one_line(a.path)}:{a.start_line}-{a.end_line}" for a in q.answers)
        if not o.hits:
            out.append("  nothing came back (none of the question's words occur in the index)")
        for rank, hit in enumerate(o.hits[: report.k], 1):
            c, shown = hit.chunk, hit.passage
            label = f" {one_line(c.symbol)} ({c.kind})" if c.symbol else f" ({c.kind})"
            more = "" if shown[1:3] == c[1:3] else f" (shown {shown.start_line}-{shown.end_line})"
            out.append(
                f"  {rank}. {hit.score:.4f}  {one_line(c.path)}:{c.start_line}-{c.end_line}{label}{more}"
            )
            if hit.contributions:
                out.append(
                    "       "
                    + ", ".join(
                        f"{t.label} {t.score:.3f} (idf {t.idf:.2f} x tf {t.tf})" for t in hit.contributions
                    )
                )
    return "\n".join(out)
