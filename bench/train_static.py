"""Train the code-static model (rag.semantic.static): one vector per index term, a passage's vector the
normalised weighted sum of its terms' vectors.

    python bench/train_static.py                      # writes rag/data/code-static.npz.gz
    python bench/train_static.py --out /tmp/w.npz.gz --steps 50

The data: the training corpus of ../shared/train (extracted into ~/.cache/rag-train; never a
repository of ../shared/codesearch/never-train-on.txt, refused here too), chunked as ingest chunks
it. The vocabulary: the VOCAB index terms (rag.text.tokenizer, code mode, the default settings) in the
most chunks. The initial vectors: a truncated SVD of the chunk x term tf-idf matrix (term
co-occurrence), so that a term no pair holds still has a vector. Then contrastive training (InfoNCE,
in-batch negatives, both directions) on (doc comment, code) pairs: a definition's leading doc comment
or docstring against its path, symbol and code with the doc removed; a batch holds pairs of one
repository, so its negatives share the positive's vocabulary, as a repository's passages do under the
rerank. torch (CPU) trains; the shipped file is numpy's. Seeds fixed, one thread count: a rerun
writes the same bytes.
"""

from __future__ import annotations

import argparse
import gzip
import io
import pickle
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path[0] = str(Path(__file__).resolve().parent.parent)

import numpy as np  # noqa: E402

from rag.chunking import chunk_file  # noqa: E402
from rag.chunking.base import Chunk  # noqa: E402
from rag.semantic.static import CODE_TOKENIZER, DIMENSIONS_TRAINED, WEIGHTS, term_weights  # noqa: E402
from rag.text.tokenizer import Tokenizer  # noqa: E402

CORPUS = Path.home() / ".cache" / "rag-train"
NEVER = Path(__file__).resolve().parents[2] / "shared" / "codesearch" / "never-train-on.txt"
EXTENSIONS = {
    ".py", ".js", ".mjs", ".ts", ".tsx", ".go", ".rs", ".java", ".kt", ".kts", ".scala", ".cs", ".c",
    ".h", ".cc", ".cpp", ".hpp", ".swift", ".rb", ".php", ".ex", ".exs", ".hs", ".lua", ".zig", ".sh",
    ".bash",
}  # fmt: skip
HASH_COMMENTS = {".py", ".rb", ".sh", ".bash", ".ex", ".exs"}
DASH_COMMENTS = {".hs", ".lua"}
VOCAB = 32768
SEED = 20250
BATCH = 256
TEMPERATURE = 0.05
LEARNING_RATE = 0.01
STEPS = 800  # about ten passes over the pairs
DOC_TERMS = 48  # a doc comment's first terms: questions are short
CODE_CHARS = 3000  # a passage's first characters, as the rerank's passages are a few thousand at most


def never_train() -> set[str]:
    """The repositories (owner+name, lowercased) no training data may come from."""
    names = set()
    for line in NEVER.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            names.add(line.replace("/", "+").lower())
    return names


_LINE_COMMENT = re.compile(r"^\s*(///?|//!|/\*\*?|\*/?|--+\|?|#+'?|;;+)\s?")
_DOCSTRING = re.compile(r'^[^\n]*:\s*\n\s*[rbuRBU]?("""|\'\'\')(.*?)\1[^\n]*\n?', re.DOTALL)
_ELIXIR_DOC = re.compile(r'@(?:doc|moduledoc)\s+~?[sS]?"""(.*?)"""', re.DOTALL)


def split_doc(chunk: Chunk, ext: str) -> tuple[str, str] | None:
    """(doc comment, code without it) of a definition, or None when it has no doc comment."""
    text = chunk.text
    if ext == ".py":
        m = _DOCSTRING.match(text)
        if m:
            return m.group(2), text[: m.start(1)] + text[m.end() :]
    if ext in (".ex", ".exs"):
        m = _ELIXIR_DOC.search(text)
        if m:
            return m.group(1), text[: m.start()] + text[m.end() :]
    lines = text.split("\n")
    doc: list[str] = []
    end = 0  # the first line of code
    while end < len(lines):
        line = lines[end]
        s = line.strip()
        if s:
            if (s.startswith("#") and ext not in HASH_COMMENTS) or (
                s.startswith("--") and ext not in DASH_COMMENTS
            ):
                break  # a C preprocessor line, a Rust attribute, a decrement
            m = _LINE_COMMENT.match(line)
            if m is None or s.startswith("#!"):
                break
            doc.append(line[m.end() :].rstrip().removesuffix("*/"))
        elif doc:
            doc.append("")
        end += 1
    if end == len(lines):
        return None
    if not any(d.strip() for d in doc):
        return None
    return "\n".join(doc), "\n".join(lines[end:])


# a file's first comment that says nothing of the definition under it
_NOT_DOC = re.compile(
    r"frozen_string_literal|eslint|SPDX|copyright|licen[cs]e|-\*-|noqa|type: ignore|prettier|@ts-|nolint|^\s*(TODO|FIXME)",
    re.IGNORECASE,
)


def first_paragraph(doc: str) -> str:
    """The doc's summary: up to its first blank line, without markup words."""
    para = re.split(r"\n\s*\n", doc.strip(), maxsplit=1)[0]
    para = re.sub(r"^\s*[@:]\w+.*$", "", para, flags=re.MULTILINE)  # @param, :param lines
    return para.strip()


def passage_text(c: Chunk, text: str) -> str:
    """As rag.semantic.rerank.passage_text: path, symbol and breadcrumb, then the text."""
    head = " ".join(p for p in (c.path, c.symbol or "", c.context) if p)
    return f"{head}\n{text[:CODE_CHARS]}"


def mine(
    tok: Tokenizer,
) -> tuple[list[list[dict[str, int]]], list[tuple[int, dict[str, int], dict[str, int]]]]:
    """Every chunk's term counts (by repository), and the (repository, doc, code) pairs."""
    never = never_train()
    chunks_by_repo: list[list[dict[str, int]]] = []
    pairs: list[tuple[int, dict[str, int], dict[str, int]]] = []
    for repo in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
        if repo.name.lower() in never:
            raise SystemExit(f"{repo.name} is on never-train-on.txt: remove it from {CORPUS}")
        counts: list[dict[str, int]] = []
        seen: set[str] = set()
        for path in sorted(p for p in repo.rglob("*") if p.is_file() and p.suffix in EXTENSIONS):
            rel = str(path.relative_to(repo))
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            try:
                chunks = chunk_file(rel, text)
            except Exception as exc:  # a chunker's bug on one file loses that file only
                print(f"  {repo.name}/{rel}: not chunked ({type(exc).__name__})", flush=True)
                continue
            for c in chunks:
                counts.append(tok.counts(passage_text(c, c.text)))
                if c.kind not in ("function", "class", "method") or not c.symbol:
                    continue
                found = split_doc(c, path.suffix)
                if found is None:
                    continue
                doc = first_paragraph(found[0])
                if _NOT_DOC.search(doc):
                    continue
                doc_terms = tok.tokenize(doc)[:DOC_TERMS]
                code = tok.counts(passage_text(c, found[1]))
                if len(doc_terms) < 3 or sum(code.values()) < 8 or doc in seen:
                    continue
                seen.add(doc)
                pairs.append((len(chunks_by_repo), dict(Counter(doc_terms)), code))
        chunks_by_repo.append(counts)
        print(f"  {repo.name}: {len(counts)} chunks, {len(pairs)} pairs so far", flush=True)
    return chunks_by_repo, pairs


def bags(items: list[dict[str, int]], vocab: dict[str, int]) -> tuple[Any, Any, Any]:
    """EmbeddingBag inputs: term ids, offsets, per-term weights (rag.semantic.static.term_weights)."""
    ids: list[int] = []
    offsets: list[int] = []
    weights: list[float] = []
    for counts in items:
        offsets.append(len(ids))
        known = [(vocab[t], n) for t, n in counts.items() if t in vocab]
        ids.extend(i for i, _ in known)
        weights.extend(term_weights([n for _, n in known]))
    return np.array(ids, dtype=np.int64), np.array(offsets, dtype=np.int64), np.array(weights, np.float32)


def svd_init(chunks: list[dict[str, int]], vocab: dict[str, int], dims: int) -> Any:
    """Term vectors from a truncated SVD of the chunk x term tf-idf matrix."""
    from scipy.sparse import csr_matrix
    from sklearn.utils.extmath import randomized_svd

    ids, offsets, weights = bags(chunks, vocab)
    indptr = np.append(offsets, len(ids))
    x = csr_matrix((weights, ids, indptr), shape=(len(chunks), len(vocab)), dtype=np.float32)
    df = np.bincount(ids, minlength=len(vocab)).astype(np.float32)
    x = x.multiply(np.log(len(chunks) / np.maximum(df, 1))[None, :]).tocsr()
    _, s, vt = randomized_svd(x, dims, n_iter=2, random_state=SEED)
    vectors = (vt.T * np.sqrt(s)[None, :]).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1).mean()


def train(
    pairs: list[tuple[int, dict[str, int], dict[str, int]]], vocab: dict[str, int], init: Any, steps: int
) -> Any:
    """Contrastive training of the term vectors, from `init`."""
    import torch
    import torch.nn.functional as F

    torch.manual_seed(SEED)
    torch.set_num_threads(2)
    torch.use_deterministic_algorithms(True)
    rng = np.random.default_rng(SEED)
    # sparse gradients: a step touches the rows of its batch's terms only
    table = torch.nn.EmbeddingBag(len(vocab), init.shape[1], mode="sum", sparse=True)
    with torch.no_grad():
        table.weight.copy_(torch.from_numpy(init))
    opt = torch.optim.SparseAdam(list(table.parameters()), lr=LEARNING_RATE)
    by_repo: dict[int, list[int]] = {}
    for i, (repo, _, _) in enumerate(pairs):
        by_repo.setdefault(repo, []).append(i)
    docs = [bags([p[1]], vocab) for p in pairs]
    codes = [bags([p[2]], vocab) for p in pairs]

    def embed(items: list[tuple[Any, Any, Any]]) -> Any:
        ids = np.concatenate([i[0] for i in items])
        offsets = np.cumsum([0] + [len(i[0]) for i in items[:-1]])
        weights = np.concatenate([i[2] for i in items])
        out = table(
            torch.from_numpy(ids), torch.from_numpy(offsets), per_sample_weights=torch.from_numpy(weights)
        )
        return F.normalize(out, dim=1)

    step = 0
    start = time.perf_counter()
    while step < steps:
        batches = []
        for repo in sorted(by_repo):
            members = rng.permutation(by_repo[repo])
            batches.extend(members[i : i + BATCH] for i in range(0, len(members), BATCH))
        for b in rng.permutation(len(batches)):
            batch = batches[b]
            if len(batch) < 16 or step >= steps:
                continue
            q = embed([docs[i] for i in batch])
            p = embed([codes[i] for i in batch])
            logits = q @ p.T / TEMPERATURE
            target = torch.arange(len(batch))
            loss = (F.cross_entropy(logits, target) + F.cross_entropy(logits.T, target)) / 2
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if step % 100 == 0:
                print(
                    f"  step {step}: loss {loss.item():.3f} [{time.perf_counter() - start:.0f} s]", flush=True
                )
    return table.weight.detach().numpy().copy()


def save(out: Path, terms: list[str], vectors: Any) -> None:
    """Write the terms and their vectors as int8 rows with a float32 scale each, gzipped."""
    scale = np.abs(vectors).max(axis=1) / 127
    scale[scale == 0] = 1
    rows = np.round(vectors / scale[:, None]).astype(np.int8)
    buf = io.BytesIO()
    vocab = np.frombuffer("\n".join(terms).encode("utf-8"), dtype=np.uint8)
    np.savez(buf, terms=vocab, rows=rows, scale=scale.astype(np.float32))
    out.write_bytes(gzip.compress(buf.getvalue(), compresslevel=9, mtime=0))


def held_out_recall(pairs: list[Any], vocab: dict[str, int], vectors: Any) -> float:
    """Recall@1 of doc -> code among each repository's held-out pairs (a sanity figure)."""
    norms = vectors

    def vec(counts: dict[str, int]) -> Any:
        known = [(vocab[t], n) for t, n in counts.items() if t in vocab]
        if not known:
            return np.zeros(norms.shape[1], np.float32)
        v = (norms[[i for i, _ in known]] * np.array(term_weights([n for _, n in known]))[:, None]).sum(0)
        return v / (np.linalg.norm(v) or 1)

    hits = total = 0
    by_repo: dict[int, list[Any]] = {}
    for p in pairs:
        by_repo.setdefault(p[0], []).append(p)
    for group in by_repo.values():
        group = group[:200]
        q = np.stack([vec(p[1]) for p in group])
        c = np.stack([vec(p[2]) for p in group])
        hits += int((np.argmax(q @ c.T, axis=1) == np.arange(len(group))).sum())
        total += len(group)
    return hits / max(total, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=WEIGHTS)
    ap.add_argument("--steps", type=int, default=STEPS)
    ap.add_argument("--vocab", type=int, default=VOCAB)
    ap.add_argument("--mined", type=Path, help="keep the mined chunks and pairs here, and read them back")
    ap.add_argument("--dims", type=int, default=DIMENSIONS_TRAINED)
    args = ap.parse_args()
    t0 = time.perf_counter()
    tok = Tokenizer(CODE_TOKENIZER)
    if args.mined is not None and args.mined.exists():
        chunks_by_repo, pairs = pickle.loads(args.mined.read_bytes())
    else:
        chunks_by_repo, pairs = mine(tok)
        if args.mined is not None:
            args.mined.write_bytes(pickle.dumps((chunks_by_repo, pairs)))
    chunks = [c for repo in chunks_by_repo for c in repo]
    print(f"{len(chunks)} chunks, {len(pairs)} pairs [{time.perf_counter() - t0:.0f} s]", flush=True)
    df: Counter[str] = Counter()
    for c in chunks:
        df.update(c.keys())
    # most chunks first, ties by the term: the same vocabulary on every run
    terms = [t for t, n in sorted(df.items(), key=lambda x: (-x[1], x[0])) if n >= 3][: args.vocab]
    vocab = {t: i for i, t in enumerate(terms)}
    rng = np.random.default_rng(SEED)
    order = rng.permutation(len(pairs))
    held = {int(i) for i in order[: len(pairs) // 20]}  # 5% held out for the sanity figure
    train_pairs = [p for i, p in enumerate(pairs) if i not in held]
    test_pairs = [p for i, p in enumerate(pairs) if i in held]
    cached_init = args.mined.with_suffix(f".init{args.vocab}x{args.dims}.npy") if args.mined else None
    if cached_init is not None and cached_init.exists():
        init = np.load(cached_init)
    else:
        init = svd_init(chunks, vocab, args.dims)
        if cached_init is not None:
            np.save(cached_init, init)
    print(
        f"svd init [{time.perf_counter() - t0:.0f} s]; held-out recall@1 {held_out_recall(test_pairs, vocab, init):.3f}"
    )
    vectors = train(train_pairs, vocab, init, args.steps)
    print(
        f"trained [{time.perf_counter() - t0:.0f} s]; held-out recall@1 {held_out_recall(test_pairs, vocab, vectors):.3f}"
    )
    save(args.out, terms, vectors)
    print(f"{args.out}: {args.out.stat().st_size / 1e6:.1f} MB, {len(terms)} terms x {args.dims}")


if __name__ == "__main__":
    main()
