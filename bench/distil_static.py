"""Distil the semantic model into code-static: term vectors trained so that a text's static vector
matches MiniLM's embedding of it (tokenlearn's method: the transformer's embeddings of a corpus as
targets for a bag of terms).

    python bench/distil_static.py [--passages 16000] [--docs 8000] [--steps 3000] [--pair-weight W] [--out FILE]

The texts: a seeded sample of the training corpus's chunks (../shared/train, as bench/train_static.py
mines it; never a repository of never-train-on.txt), as the rerank embeds a passage (path, symbol and
breadcrumb, then its text), and the first paragraphs of its definitions' doc comments, which read
like questions. Their MiniLM embeddings (the shipped int8 model, one text a run: deterministic) are
cached beside --cache. Training starts from the shipped code-static rows (rag/data/code-static.npz.gz,
from bench/train_static.py) and minimises 1 - cosine between a text's static vector and its MiniLM
vector, with the static model's own pooling (rag.semantic.static: 1 + ln tf weights, normalised sum);
with --pair-weight W, plus W times bench/train_static.py's contrastive loss on (doc comment, code) pairs.
torch (CPU) trains; seeds fixed, one thread count. Measured in docs/levers.md ("The semantic model
distilled into code-static"); not the shipped weights.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import pickle
import sys
import time
from pathlib import Path
from typing import Any

sys.path[0] = str(Path(__file__).resolve().parent.parent)

import numpy as np  # noqa: E402

from bench.train_static import (  # noqa: E402
    _NOT_DOC,
    CORPUS,
    EXTENSIONS,
    SEED,
    TEMPERATURE,
    bags,
    first_paragraph,
    mine,
    never_train,
    passage_text,
    save,
    split_doc,
)
from rag.chunking import chunk_file  # noqa: E402
from rag.semantic.model import CHARS_PER_TOKEN, PASSAGE_TOKENS  # noqa: E402
from rag.semantic.static import CODE_TOKENIZER, PASSAGE_CHARS, WEIGHTS  # noqa: E402
from rag.text.tokenizer import Tokenizer  # noqa: E402

BATCH = 256
PAIR_BATCH = 128
LEARNING_RATE = 0.003


def texts() -> tuple[list[str], list[str]]:
    """Every chunk's passage text and every definition's doc summary in the training corpus."""
    never = never_train()
    passages: list[str] = []
    docs: list[str] = []
    for repo in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
        if repo.name.lower() in never:
            raise SystemExit(f"{repo.name} is on never-train-on.txt: remove it from {CORPUS}")
        for path in sorted(p for p in repo.rglob("*") if p.is_file() and p.suffix in EXTENSIONS):
            rel = str(path.relative_to(repo))
            try:
                text = path.read_text(encoding="utf-8")
                chunks = chunk_file(rel, text)
            except Exception:  # unreadable or a chunker's bug: that file only
                continue
            for c in chunks:
                passages.append(passage_text(c, c.text))
                if c.kind in ("function", "class", "method") and c.symbol:
                    found = split_doc(c, path.suffix)
                    if found is not None:
                        doc = first_paragraph(found[0])
                        if len(doc.split()) >= 4 and not _NOT_DOC.search(doc):
                            docs.append(" ".join(doc.split()))
    return passages, sorted(set(docs))


def targets(sample: list[str], cache: Path) -> Any:
    """MiniLM's vector of each text, cached by the text's hash (a larger sample embeds only what is new)."""
    known: dict[bytes, Any] = {}
    if cache.exists():
        data = np.load(cache)
        known = dict(zip((bytes(k) for k in data["keys"]), data["vectors"]))
    keys = [hashlib.sha1(t.encode("utf-8")).digest() for t in sample]
    missing = [i for i, k in enumerate(keys) if k not in known]
    if missing:
        from rag.semantic.model import load

        model = load("minilm-l6-q8")
        t0 = time.perf_counter()
        for start in range(0, len(missing), 512):
            part = missing[start : start + 512]
            for i, v in zip(part, model.embed([sample[i] for i in part])):
                known[keys[i]] = v
            print(
                f"  embedded {start + len(part)}/{len(missing)} [{time.perf_counter() - t0:.0f} s]",
                flush=True,
            )
            if (start // 512) % 8 == 7 or start + 512 >= len(missing):
                order = sorted(known)
                np.savez(
                    cache,
                    keys=np.array([np.frombuffer(k, np.uint8) for k in order]),
                    vectors=np.stack([known[k] for k in order]),
                )
    return np.stack([known[k] for k in keys]).astype(np.float32)


def shipped() -> tuple[list[str], Any]:
    """The shipped code-static terms and rows (bench/train_static.py's output), as float32."""
    data = np.load(io.BytesIO(gzip.decompress(WEIGHTS.read_bytes())))
    terms = bytes(data["terms"]).decode("utf-8").split("\n")
    return terms, (data["rows"].astype(np.float32) * data["scale"][:, None]).astype(np.float32)


def train(
    items: list[tuple[Any, Any, Any]],
    y: Any,
    init: Any,
    steps: int,
    held: int,
    pairs: list[Any],
    pair_weight: float,
) -> Any:
    """Train the term vectors from `init` towards the targets `y` of `items` (the first `held` held out)."""
    import torch
    import torch.nn.functional as F

    torch.manual_seed(SEED)
    torch.set_num_threads(2)
    torch.use_deterministic_algorithms(True)
    rng = np.random.default_rng(SEED)
    table = torch.nn.EmbeddingBag(init.shape[0], init.shape[1], mode="sum", sparse=True)
    with torch.no_grad():
        table.weight.copy_(torch.from_numpy(init))
    opt = torch.optim.SparseAdam(list(table.parameters()), lr=LEARNING_RATE)
    yt = torch.from_numpy(y)

    def embed(rows: Any, source: Any = items) -> Any:
        part = [source[i] for i in rows]
        ids = np.concatenate([p[0] for p in part])
        offsets = np.cumsum([0] + [len(p[0]) for p in part[:-1]])
        weights = np.concatenate([p[2] for p in part])
        out = table(
            torch.from_numpy(ids), torch.from_numpy(offsets), per_sample_weights=torch.from_numpy(weights)
        )
        return F.normalize(out, dim=1)

    usable = np.array([i for i in range(held, len(items)) if len(items[i][0])])
    test = np.array([i for i in range(held) if len(items[i][0])])

    def held_cos() -> float:
        with torch.no_grad():
            return float((embed(test) * yt[test]).sum(1).mean())

    print(f"  held-out cosine to MiniLM at start {held_cos():.3f}", flush=True)
    by_repo: dict[int, list[int]] = {}
    for i, p in enumerate(pairs):
        by_repo.setdefault(p[0], []).append(i)
    repos = [r for r in sorted(by_repo) if len(by_repo[r]) >= 32]
    docs = [p[1] for p in pairs]
    codes = [p[2] for p in pairs]
    t0 = time.perf_counter()
    step = 0
    while step < steps:
        order = rng.permutation(len(usable))
        for b in range(0, len(usable) - BATCH + 1, BATCH):
            if step >= steps:
                break
            rows = usable[order[b : b + BATCH]]
            loss = (1 - (embed(rows) * yt[rows]).sum(1)).mean()
            if pair_weight and repos:
                members = by_repo[repos[int(rng.integers(len(repos)))]]
                batch = rng.permutation(members)[:PAIR_BATCH]
                q = embed(batch, docs)
                c = embed(batch, codes)
                logits = q @ c.T / TEMPERATURE
                target = torch.arange(len(batch))
                loss = (
                    loss
                    + pair_weight * (F.cross_entropy(logits, target) + F.cross_entropy(logits.T, target)) / 2
                )
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if step % 250 == 0:
                print(
                    f"  step {step}: loss {loss.item():.4f}, held-out {held_cos():.3f} [{time.perf_counter() - t0:.0f} s]",
                    flush=True,
                )
    return table.weight.detach().numpy().copy()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=WEIGHTS)
    ap.add_argument("--passages", type=int, default=16000)
    ap.add_argument("--docs", type=int, default=8000)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--pair-weight", type=float, default=0.0, help="the contrastive (doc, code) loss's share")
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "rag-distil")
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    passages, docs = texts()
    rng = np.random.default_rng(SEED)
    # prefixes of one seeded order: a larger sample holds the smaller one
    sample = [passages[i] for i in rng.permutation(len(passages))[: args.passages]]
    sample += [docs[i] for i in rng.permutation(len(docs))[: args.docs]]
    sample = [sample[i] for i in rng.permutation(len(sample))]
    print(
        f"{len(passages)} passages, {len(docs)} docs; {len(sample)} texts [{time.perf_counter() - t0:.0f} s]",
        flush=True,
    )
    cap = PASSAGE_TOKENS * CHARS_PER_TOKEN
    y = targets(sample, args.cache / "minilm.npz")
    terms, init = shipped()
    vocab = {t: i for i, t in enumerate(terms)}
    tok = Tokenizer(CODE_TOKENIZER)
    # the static model reads what MiniLM read of each text (its first PASSAGE_TOKENS tokens)
    items = [bags([tok.counts(t[: min(cap, PASSAGE_CHARS)])], vocab) for t in sample]
    pairs: list[Any] = []
    if args.pair_weight:
        mined = args.cache / "mined.pkl"
        if mined.exists():
            pairs = pickle.loads(mined.read_bytes())
        else:
            pairs = mine(tok)[1]
            mined.write_bytes(pickle.dumps(pairs))
        pairs = [(r, bags([d], vocab), bags([c], vocab)) for r, d, c in pairs]
        print(f"{len(pairs)} (doc, code) pairs [{time.perf_counter() - t0:.0f} s]", flush=True)
    vectors = train(items, y, init, args.steps, len(sample) // 20, pairs, args.pair_weight)
    save(args.out, terms, vectors)
    print(f"{args.out}: {args.out.stat().st_size / 1e6:.1f} MB [{time.perf_counter() - t0:.0f} s]")


if __name__ == "__main__":
    main()
