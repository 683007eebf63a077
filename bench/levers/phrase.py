"""A lever measured and not kept: a candidate holding a run of MINRUN or more of the question's words
as written (at least CONTENT of them not stop words) scores up by MULT x its score x (min(run, 6) -
MINRUN + 1). Applied in process around rag.ranking.order.boost, on the four sets of bench/ranking.py:

    python bench/levers/phrase.py [--semantic] 0.3:3:1 0.2:4:1 0.2:4:2     # MULT:MINRUN:CONTENT each

Each argument is one configuration; "off" runs the defaults. Figures: docs/levers.md ("word runs").
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

sys.path[0] = str(Path(__file__).resolve().parents[2])

import bench.ranking as bench_ranking  # noqa: E402
import rag.ranking.order as ranking  # noqa: E402

_WORD = re.compile(r"[a-z0-9]+")
STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "for",
        "and",
        "or",
        "is",
        "are",
        "be",
        "by",
        "it",
        "as",
        "at",
        "if",
        "do",
        "does",
        "my",
        "i",
        "how",
        "what",
        "why",
        "when",
        "where",
        "which",
        "who",
        "this",
        "that",
        "with",
        "from",
        "not",
        "no",
        "can",
    ]
)
SETTING = {"mult": 0.0, "minrun": 3, "content": 1, "question": ""}


def run_length(words: list[str], text: str) -> int:
    """The longest run of consecutive `words` found in `text` as written, with enough content words."""
    padded = " " + " ".join(_WORD.findall(text.lower())) + " "
    best = 0
    for i in range(len(words)):
        for j in range(i + max(best, 2) + 1, len(words) + 1):
            run = words[i:j]
            if " " + " ".join(run) + " " not in padded:
                break
            if sum(w not in STOP for w in run) >= SETTING["content"]:
                best = j - i
    return best


_boost = ranking.boost


def boost(
    hits: list[Any], shape: Any, demoted: list[float], reasons: list[Any], *args: Any, **kw: Any
) -> Any:
    out, why = _boost(hits, shape, demoted, reasons, *args, **kw)
    if shape.symbol is None and SETTING["mult"]:
        words = _WORD.findall(str(SETTING["question"]).lower())
        power = (args[0] if args else kw.get("weights", ranking.DEFAULTS)).score_power
        for i, h in enumerate(hits):
            r = run_length(words, h.chunk.text)
            if r >= SETTING["minrun"]:
                out[i] += (
                    max(demoted[i], 0.0) ** power * SETTING["mult"] * (min(r, 6) - SETTING["minrun"] + 1)
                )
                why[i] = why[i] or "holds words of the question as written"
    return out, why


_ranked = bench_ranking.ranked


def ranked(index: Any, question: str, weights: Any) -> list[Any]:
    SETTING["question"] = question
    return _ranked(index, question, weights)


def main() -> None:
    configs = [a for a in sys.argv[1:] if not a.startswith("--")]
    flags = [a for a in sys.argv[1:] if a.startswith("--")]
    ranking.boost = boost
    bench_ranking.ranked = ranked
    for config in configs or ["off"]:
        if config != "off":
            mult, minrun, content = config.split(":")
            SETTING.update(mult=float(mult), minrun=int(minrun), content=int(content))
        print(f"word runs {config}:", flush=True)
        bench_ranking.main([*flags, config.replace(":", "/") + ":"])


if __name__ == "__main__":
    main()
