"""Mine the vocabulary bridge (bench/data/bridge.tsv.gz): doc-comment words -> the code terms they document.

    python bench/levers/train_bridge.py [--corpus ~/.cache/rag-train] [--top 10] [--out bench/data/bridge.tsv.gz]

Each definition passage (function, method, class) that rag's chunkers cut from the training corpus
(../shared/train: open-source repositories, none of them evaluated on) is a pair: the words of its
comments and docstrings, tokenized as a question is (rag.text.tokenizer's query side), and the terms of
the rest of its code, string literals left out, tokenized as the index is. A doc word w and a code term
c are associated when they meet in at least MIN_PAIRS pairs of at least MIN_REPOS repositories (so no
one project's names make the table), c is not w, and they meet LIFT times more often than they would
by chance within each repository (so a language's keywords and a project's names, which meet every
word of its docs, do not stand out). The score is a normalised PMI against that chance, at most 1;
each word keeps its --top best terms.

The output is deterministic: the same corpus gives the same bytes (sorted input, sorted output, gzip
with no time stamp). bench/levers/bridge.py reads it, to measure it as query terms; the product does
not (measured, the lever was left off).
"""

from __future__ import annotations

import argparse
import gzip
import math
import pickle
import re
import sys
import time
from collections import Counter
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parents[2])

from rag.chunking import chunk_file  # noqa: E402
from rag.text.tokenizer import Tokenizer, TokenizerSettings  # noqa: E402

CORPUS = Path.home() / ".cache" / "rag-train"
OUT = Path(__file__).resolve().parents[1] / "data" / "bridge.tsv.gz"
DEFINITIONS = frozenset({"function", "method", "class"})
MIN_WORD_PAIRS = 30  # a doc word seen in fewer pairs has too little evidence for any term
MIN_PAIRS = 8  # a (word, term) association needs this many pairs ...
MIN_REPOS = 3  # ... from this many repositories
LIFT = 4.0  # and the term this many times likelier with the word than overall
MAX_TERM_SHARE = 0.2  # terms in more of all pairs than this (self, return, if) say nothing
MAX_DOC_TERMS = 60  # a pair's doc side is cut to its first terms: a long essay is not one definition's
TOP = 10

_SLASH = "//"
_HASH = "#"
_DASH = "--"
# comment syntax by file extension: line-comment marker, block comments, docstring-like strings
_C_BLOCK = r"/\*[\s\S]*?\*/"
_TRIPLE = r'"""[\s\S]*?"""|' + r"'''[\s\S]*?'''"
LANGUAGES: dict[str, tuple[str, str]] = {}
for _ext in [
    ".js",
    ".mjs",
    ".ts",
    ".tsx",
    ".go",
    ".rs",
    ".java",
    ".kt",
    ".kts",
    ".scala",
    ".cs",
    ".c",
    ".h",
    ".cc",
    ".cpp",
    ".hpp",
    ".swift",
    ".zig",
]:
    LANGUAGES[_ext] = (_SLASH, _C_BLOCK)
LANGUAGES[".php"] = (r"//|#(?!\[)", _C_BLOCK)
for _ext in (".py",):
    LANGUAGES[_ext] = (_HASH, _TRIPLE)
for _ext in (".ex", ".exs"):
    LANGUAGES[_ext] = (_HASH, _TRIPLE)
for _ext in (".rb",):
    LANGUAGES[_ext] = (_HASH, r"^=begin[\s\S]*?^=end")
for _ext in (".sh", ".bash"):
    LANGUAGES[_ext] = (_HASH, r"(?!)")
LANGUAGES[".hs"] = (_DASH, r"\{-[\s\S]*?-\}")
LANGUAGES[".lua"] = (_DASH, r"--\[\[[\s\S]*?\]\]")

_FENCE = re.compile(r"```[\s\S]*?(```|$)")  # code examples inside a doc are code, not its words
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|' + r"'(?:[^'\\\n]|\\.)*'|`[^`\n]*`")


def _patterns(ext: str) -> re.Pattern[str]:
    line, block = LANGUAGES[ext]
    if line == _SLASH:
        line_re = r"//[^\n]*"
    elif line == _HASH:
        line_re = r"#[^\n]*"
    elif line == _DASH:
        line_re = r"--[^\n]*"
    else:
        line_re = f"(?:{line})[^\\n]*"
    # block first: `/**` must not be read as a line comment's start, nor `--[[` as `--`
    return re.compile(f"(?m){block}|{line_re}")


_COMPILED = {ext: _patterns(ext) for ext in LANGUAGES}


def split_comments(ext: str, text: str) -> tuple[str, str]:
    """Return (the comment and docstring text, the code with comments and string literals blanked)."""
    pattern = _COMPILED[ext]
    docs = [m.group(0) for m in pattern.finditer(text)]
    code = _STRING.sub(" ", pattern.sub(" ", text))
    return _FENCE.sub(" ", "\n".join(docs)), code


def pairs_of(repo: Path, tokenizer: Tokenizer, side: str) -> list[tuple[frozenset[str], frozenset[str]]]:
    """(doc words, code terms) of each documented definition in one repository, in path order."""
    out = []
    seen: set[str] = set()
    for path in sorted(p for p in repo.rglob("*") if p.is_file() and p.suffix in LANGUAGES):
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        rel = path.relative_to(repo).as_posix()
        try:
            chunks = chunk_file(rel, text)
        except IndexError as e:  # a chunker's bug on one file should not end the mining; say which
            print(f"skipped {repo.name}/{rel}: {e!r}", file=sys.stderr)
            continue
        for chunk in chunks:
            if chunk.kind not in DEFINITIONS or chunk.text in seen:
                continue
            seen.add(chunk.text)
            doc, code = split_comments(path.suffix, chunk.text)
            words = list(tokenizer.query_counts(doc))[:MAX_DOC_TERMS]
            if side == "name":  # the definition's own name, its last part: `steal` of Worker.steal
                terms = frozenset(tokenizer.counts((chunk.symbol or "").rsplit(".", 1)[-1]))
            else:
                terms = frozenset(tokenizer.counts(code))
            if words and terms:
                out.append((frozenset(words), terms))
    return out


def mine(
    corpus: Path,
    top: int,
    side: str = "body",
    min_pairs: int = MIN_PAIRS,
    cache: Path | None = None,
    score: str = "npmi",
) -> tuple[list[tuple[str, list[tuple[str, float]]]], dict[str, int]]:
    """The table (word, [(term, score)] best first), sorted by word, and counts describing it."""
    tokenizer = Tokenizer(TokenizerSettings())
    repos = sorted(p for p in corpus.iterdir() if p.is_dir())
    by_repo = []
    if cache is not None and cache.exists():
        by_repo = pickle.loads(cache.read_bytes())
    for repo in repos[len(by_repo) :]:
        t0 = time.perf_counter()
        pairs = pairs_of(repo, tokenizer, side)
        by_repo.append(pairs)
        print(f"{repo.name:40} {len(pairs):6} pairs  {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    if cache is not None:
        cache.write_bytes(pickle.dumps(by_repo))
    n_pairs = sum(len(p) for p in by_repo)
    word_pairs: Counter[str] = Counter()
    term_pairs: Counter[str] = Counter()
    for pairs in by_repo:
        for words, terms in pairs:
            word_pairs.update(words)
            term_pairs.update(terms)
    words_kept = {w for w, n in word_pairs.items() if n >= MIN_WORD_PAIRS}
    terms_kept = {c for c, n in term_pairs.items() if n >= min_pairs and n <= MAX_TERM_SHARE * n_pairs}
    both: Counter[tuple[str, str]] = Counter()
    repos_of: Counter[tuple[str, str]] = Counter()
    for pairs in by_repo:
        here: Counter[tuple[str, str]] = Counter()
        for words, terms in pairs:
            ws = sorted(words & words_kept)
            cs = sorted(terms & terms_kept)
            here.update((w, c) for w in ws for c in cs if c != w)
        both.update(here)
        repos_of.update(here.keys())
    found = sorted(k for k, n in both.items() if n >= min_pairs and repos_of[k] >= MIN_REPOS)
    expected = _expected(by_repo, found)
    table: dict[str, list[tuple[float, str]]] = {}
    kept = []
    for (w, c), e in zip(found, expected):
        n = both[(w, c)]
        if n < LIFT * e:
            continue
        kept.append((w, c))
        npmi = math.log(n / e) / -math.log(n / n_pairs)
        table.setdefault(w, []).append((npmi, c))
    if score == "model1":
        table = _model1(by_repo, words_kept, terms_kept, set(kept))
    rows = []
    for w in sorted(table):
        best = sorted(table[w], key=lambda x: (-x[0], x[1]))[:top]
        rows.append((w, [(c, round(s, 3)) for s, c in best]))
    stats = {"repositories": len(repos), "pairs": n_pairs, "words": len(rows)}
    return rows, stats


def _model1(
    by_repo: list[list[tuple[frozenset[str], frozenset[str]]]],
    words_kept: set[str],
    terms_kept: set[str],
    allowed: set[tuple[str, str]],
    iterations: int = 8,
) -> dict[str, list[tuple[float, str]]]:
    """IBM Model 1's t(term | word), by EM over the pairs, each pair's code terms drawn from its doc
    words or a null word (which takes what every definition has). Kept: the associations in
    `allowed` (those the chance-corrected filter passed), scored by t(term | word) over the best
    such t of the word (so 1 for its best term), down to a tenth."""
    import numpy as np

    words = sorted(words_kept) + [""]  # the null word last
    terms = sorted(terms_kept)
    wi = {w: i for i, w in enumerate(words)}
    ci = {c: i for i, c in enumerate(terms)}
    null = len(words) - 1
    data = []
    for pairs in by_repo:
        for ws, cs in pairs:
            d = np.array(sorted([wi[w] for w in ws if w in wi]) + [null], dtype=np.int64)
            c = np.array(sorted(ci[x] for x in cs if x in ci), dtype=np.int64)
            if len(d) > 1 and len(c):
                data.append((d, c))
    t = np.full((len(words), len(terms)), 1.0 / len(terms), dtype=np.float32)
    for it in range(iterations):
        counts = np.zeros_like(t)
        for d, c in data:
            sub = t[np.ix_(d, c)]
            counts[np.ix_(d, c)] += sub / sub.sum(axis=0, keepdims=True)
        t = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1e-12)
        print(f"model 1 iteration {it + 1}", file=sys.stderr)
    found: dict[str, list[tuple[float, str]]] = {}
    for w, c in sorted(allowed):
        found.setdefault(w, []).append((float(t[wi[w], ci[c]]), c))
    table: dict[str, list[tuple[float, str]]] = {}
    for w, scored in found.items():
        best = max(p for p, _ in scored)
        if best > 0:
            table[w] = [(p / best, c) for p, c in scored if p >= best / 10]
    return table


def _expected(
    by_repo: list[list[tuple[frozenset[str], frozenset[str]]]], found: list[tuple[str, str]]
) -> list[float]:
    """How many pairs would hold each (word, term) if they were independent within each repository:
    the sum over repositories of n(word) n(term) / n(pairs). A language's keywords (`fn`, `let`,
    `end`) and a project's own names meet every word of its docs; against this they do not stand out."""
    import numpy as np

    words = sorted({w for w, _ in found})
    terms = sorted({c for _, c in found})
    wi = {w: i for i, w in enumerate(words)}
    ci = {c: i for i, c in enumerate(terms)}
    share_w = np.zeros((len(by_repo), len(words)))
    count_c = np.zeros((len(by_repo), len(terms)))
    for r, pairs in enumerate(by_repo):
        for ws, cs in pairs:
            for w in ws:
                if w in wi:
                    share_w[r, wi[w]] += 1
            for c in cs:
                if c in ci:
                    count_c[r, ci[c]] += 1
        share_w[r] /= max(1, len(pairs))
    w_idx = np.array([wi[w] for w, _ in found], dtype=np.int64)
    c_idx = np.array([ci[c] for _, c in found], dtype=np.int64)
    out: list[float] = []
    for start in range(0, len(found), 100_000):
        a, b = w_idx[start : start + 100_000], c_idx[start : start + 100_000]
        out.extend((share_w[:, a] * count_c[:, b]).sum(axis=0).tolist())
    return out


def write(rows: list[tuple[str, list[tuple[str, float]]]], out: Path) -> None:
    """Write word<TAB>term:score,term:score... lines, gzip'd with no name or time stamp."""
    tokenizer = TokenizerSettings()
    head = f"# rag vocabulary bridge; tokenizer stem={tokenizer.stem}\n"
    body = "".join(f"{w}\t{','.join(f'{c}:{s:g}' for c, s in terms)}\n" for w, terms in rows)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", filename="", mtime=0) as gz:
        gz.write((head + body).encode())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--top", type=int, default=TOP, help="code terms kept per doc word")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument(
        "--side",
        choices=("body", "name"),
        default="body",
        help="a pair's code side: the whole definition or its name",
    )
    ap.add_argument("--min-pairs", type=int, default=MIN_PAIRS, help="pairs an association needs")
    ap.add_argument(
        "--score", choices=("npmi", "model1"), default="npmi", help="how an association is scored"
    )
    ap.add_argument("--cache", type=Path, help="keep the pairs here, to mine again without chunking")
    args = ap.parse_args()
    rows, stats = mine(args.corpus, args.top, args.side, args.min_pairs, args.cache, args.score)
    write(rows, args.out)
    print(
        f"{stats['pairs']} pairs from {stats['repositories']} repositories; {stats['words']} words; "
        f"{args.out} {args.out.stat().st_size} bytes",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
