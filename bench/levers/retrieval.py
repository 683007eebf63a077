"""Retrieval levers, each measured on then off: tokenizer settings, indexed fields, rerank.

    python bench/levers/retrieval.py [--sets docstring,dev] [--corpora flask,django] [--lever NAME,...]
                           [--config 'label:key=value;key=value' ...] [--refs] [--real] [--record]

Every corpus is walked, read, redacted and chunked once (cached in $TMPDIR/rag-levers, keyed by
the chunker and walker sources). Each configuration then tokenizes the chunks with
rag.text.terms.chunk_counts under its TokenizerSettings, builds an in-memory TF-IDF matrix with
exactly rag.retrieval.search's weights (1 + ln tf, ln((1 + N) / (1 + df)) + 1, cosine), takes the best
rag.ranking.order.candidate_count(10) chunks (ties by chunk order, as rag.retrieval.search) and hands them to
rag.ranking.order.rank_hits. `--real` instead builds a temporary SQLite index with
rag.indexing.pipeline.ingest and searches it with rag.retrieval.search (slower; confirms the in-memory figures).

A configuration is a label and overrides: TokenizerSettings fields (`stem=snowball`,
`path_weight=2`), rank_hits keyword arguments (`rerank.dedupe=0`) and the ranking's weights
(`weights.test_factor=0.8`: rag.weights.RankingWeights fields). `--lever NAME` runs one
of the LEVERS below: the chosen defaults, then each alternative. `--refs` adds the bench
references on the default configuration's chunks and terms: sklearn TfidfVectorizer and
bm25s BM25 (k1=1.5, b=0.75), as bench/quality.py runs them. `--record` appends the tables to
docs/levers.md (RECORD) with the date and command.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import math
import os
import pickle
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parents[2])  # bench/secrets.py must not shadow `secrets`

import numpy as np  # noqa: E402
from scipy import sparse  # noqa: E402

from rag.chunking import Chunk, chunk_file  # noqa: E402
from rag.evaluation import EVAL_DEPTH, Metrics, Question, QuestionOutcome, evaluate, load_questions, metrics  # noqa: E402
from rag.indexing.pipeline import IngestOptions  # noqa: E402
from rag.ranking import order as rerank_module  # noqa: E402
from rag.ranking.hits import Hit  # noqa: E402
from rag.secrets import redact  # noqa: E402
from rag.sources.reading import read_text  # noqa: E402
from rag.sources.walk import walk  # noqa: E402
from rag.text.terms import chunk_counts  # noqa: E402
from rag.text.tokenizer import Tokenizer, TokenizerSettings  # noqa: E402
from rag.weights import DEFAULTS, RankingWeights  # noqa: E402

PROJECT = Path(__file__).resolve().parents[2]
CORPORA = Path(os.environ.get("RAG_CORPORA", Path.home() / ".cache" / "rag-corpora"))
EVAL_DIR = PROJECT.parent / "shared" / "eval"
SETS = {  # name -> (questions file, corpus root)
    "docstring": ("docstring-queries.jsonl", CORPORA / "docstring-stripped"),
    "dev": ("dev-questions.jsonl", CORPORA),
}
CACHE = Path(tempfile.gettempdir()) / "rag-levers"
RECORD = Path(__file__).resolve().parents[2] / "docs" / "levers.md"
TF_MAX = 65535  # tfs are stored as uint16

# lever -> configurations, the first being "all defaults on"; each later one turns one thing off
# or swaps it for an alternative. Labels are what the tables show.
LEVERS: dict[str, list[str]] = {
    "identifiers": ["defaults:", "no whole identifiers:identifiers=0"],
    "stem": ["defaults:", "stem none:stem=none", "stem suffix:stem=suffix", "stem porter2:stem=porter2"],
    "question-words": [
        "defaults:",
        "no query stopwords:query_stopwords=0",
        "keep 1-letter:min_length=1",
        "neither:query_stopwords=0;min_length=1",
    ],
    "fields": [
        "defaults:",
        "no path field:path_weight=0",
        "no symbol field:symbol_weight=0",
        "neither:path_weight=0;symbol_weight=0",
    ],
    "rerank": [
        "defaults:",
        "test factor 0.8:weights.test_factor=0.8",
        "no test demotion:rerank.tests=0",
        "no dedupe:rerank.dedupe=0",
        "no docs/code mix:rerank.mix=0",
        "identity:rerank.tests=0;rerank.dedupe=0;rerank.mix=0;rerank.boilerplate=0",
    ],
    "boilerplate": ["defaults:", "no licence/changelog demotion:rerank.boilerplate=0"],
}


@dataclass(frozen=True)
class Config:
    """One measured configuration: tokenizer settings and rank_hits keyword arguments (weights among them)."""

    label: str
    settings: TokenizerSettings
    rerank: dict[str, object]


def parse_config(spec: str) -> Config:
    """Parse 'label:key=value;key=value' into a Config over the current defaults."""
    label, _, body = spec.partition(":")
    overrides: dict[str, object] = {}
    rr: dict[str, object] = {}
    weights: dict[str, object] = {}
    types = {name: str(kind) for name, kind in TokenizerSettings.__annotations__.items()}
    for item in filter(None, (s.strip() for s in body.split(";"))):
        key, _, raw = item.partition("=")
        value: object = _value(raw)
        if key.startswith("rerank."):
            rr[key[len("rerank.") :]] = value
        elif key.startswith("weights.") and key[len("weights.") :] in RankingWeights._fields:
            name = key[len("weights.") :]
            weights[name] = type(RankingWeights._field_defaults[name])(value)
        elif key in types:
            if "bool" in str(types[key]) and isinstance(value, int):
                value = bool(value)
            overrides[key] = value
        else:
            raise SystemExit(f"unknown setting {key!r} in {spec!r}")
    if weights:
        rr["weights"] = DEFAULTS._replace(**weights)
    return Config(label or body, TokenizerSettings()._replace(**overrides), rr)


def _value(raw: str) -> object:
    for cast in (int, float):
        try:
            return cast(raw)
        except ValueError:
            pass
    return raw


# ---------------------------------------------------------------- chunks, cached per corpus


def _source_digest() -> str:
    h = hashlib.sha1()
    for p in sorted(
        [
            *(PROJECT / "rag" / "chunking").glob("*.py"),
            *(PROJECT / "rag" / "secrets").glob("*.py"),
            PROJECT / "rag" / "sources" / "walk.py",
        ]
    ):
        h.update(p.read_bytes())
    return h.hexdigest()[:12]


def corpus_chunks(root: Path) -> list[Chunk]:
    """Return the chunks of a corpus in index order (by path, then position), as ingest makes them."""
    key = hashlib.sha1(str(root).encode()).hexdigest()[:10]
    cached = CACHE / f"{root.name}-{key}-{_source_digest()}.pickle"
    if cached.exists():
        return pickle.loads(cached.read_bytes())
    listing = walk(root)
    chunks: list[Chunk] = []
    for f in sorted(listing.files, key=lambda f: f.path):
        read = read_text(f.abspath)
        if read.text is None:
            continue
        text, _ = redact(read.text)
        chunks.extend(chunk_file(f.path, text))
    CACHE.mkdir(parents=True, exist_ok=True)
    cached.write_bytes(pickle.dumps(chunks))
    return chunks


# ---------------------------------------------------------------- in-memory rag.retrieval.search


class MemoryIndex:
    """rag.retrieval.search's scoring over a sparse matrix: chunk rows, term columns, normalised tf-idf."""

    def __init__(self, chunks: list[Chunk], settings: TokenizerSettings) -> None:
        self.chunks = chunks
        self.tokenizer = Tokenizer(settings)
        vocab: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        tfs: list[int] = []
        self.counts = []
        for cid, chunk in enumerate(chunks):
            counts = chunk_counts(chunk, self.tokenizer)
            self.counts.append(counts)
            for term, tf in counts.items():
                rows.append(cid)
                cols.append(vocab.setdefault(term, len(vocab)))
                tfs.append(min(tf, TF_MAX))
        self.vocab = vocab
        n = len(chunks)
        col = np.asarray(cols, dtype=np.int64)
        df = np.bincount(col, minlength=len(vocab))
        self.idf = np.log((1 + n) / (1 + df)) + 1.0
        w = (1.0 + np.log(np.asarray(tfs, dtype=np.float64))) * self.idf[col]
        m = sparse.csr_matrix((w, (np.asarray(rows), col)), shape=(n, len(vocab)))
        norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        self.matrix = sparse.csc_matrix(sparse.diags(1.0 / norms) @ m)
        self.paths = frozenset(c.path for c in chunks)

    def query_vector(self, question: str) -> tuple[list[int], np.ndarray]:
        """Return the term columns of a question and its unit tf-idf weights over them."""
        cols, qw = [], []
        for term, n in self.tokenizer.query_counts(question).items():
            c = self.vocab.get(term)
            if c is not None:
                cols.append(c)
                qw.append((1.0 + math.log(n)) * self.idf[c])
        q = np.asarray(qw, dtype=np.float64)
        return cols, q / np.sqrt((q * q).sum()) if cols else q

    def search(self, question: str, k: int, rerank_kwargs: dict[str, object]) -> list[Hit]:
        """Return rag.retrieval.search's top k for `question`, reranked."""
        cols, q = self.query_vector(question)
        if not cols:
            return []
        scores = self.matrix[:, cols] @ q
        cand = np.flatnonzero(scores > 0)
        weights = rerank_kwargs.get("weights", DEFAULTS)
        assert isinstance(weights, RankingWeights)
        want = rerank_module.candidate_count(k, weights)
        if len(cand) > want * 4:
            part = cand[np.argpartition(-scores[cand], want)[: want * 2]]
            cand = part
        order = cand[np.lexsort((cand, -scores[cand]))][:want]
        hits = [Hit(float(scores[i]), self.chunks[i]) for i in order]
        return rerank_module.rank_hits(hits, k, **rerank_kwargs)  # type: ignore[arg-type]

    def tokens(self) -> list[list[str]]:
        """Return each chunk's stored terms expanded to a token list (for the references)."""
        return [[t for t, n in c.items() for _ in range(min(n, TF_MAX))] for c in self.counts]


# ---------------------------------------------------------------- running


@dataclass
class Row:
    label: str
    overall: Metrics
    per_corpus: dict[str, Metrics]
    seconds: float


def run_config(cfg: Config, set_name: str, corpora: list[str], questions: list[Question], real: bool) -> Row:
    """Evaluate one configuration over the chosen corpora of one set."""
    _, root = SETS[set_name]
    started = time.perf_counter()
    outcomes: list[QuestionOutcome] = []
    per: dict[str, Metrics] = {}
    for corpus in corpora:
        qs = [q for q in questions if q.corpus == corpus]
        if real:
            result = _real_eval(root / corpus, cfg, qs)
        else:
            index = MemoryIndex(corpus_chunks(root / corpus), cfg.settings)
            result = evaluate(
                qs, lambda q: index.search(q.question, EVAL_DEPTH, cfg.rerank), indexed=lambda q: index.paths
            ).outcomes
        outcomes.extend(result)
        per[corpus] = metrics(result)
    return Row(cfg.label, metrics(outcomes), per, time.perf_counter() - started)


def _real_eval(root: Path, cfg: Config, qs: list[Question]) -> tuple[QuestionOutcome, ...]:
    from functools import partial
    from unittest import mock

    from rag import Index, ingest, search

    # the weights go to search(), which passes them on; the switches (tests, dedupe, ...) to rank_hits
    switches = dict(cfg.rerank)
    weights = switches.pop("weights", DEFAULTS)
    assert isinstance(weights, RankingWeights)
    with (
        tempfile.TemporaryDirectory() as tmp,
        mock.patch.object(
            sys.modules["rag.retrieval.search"], "rank_hits", partial(rerank_module.rank_hits, **switches)
        ),
    ):
        index_path = Path(tmp) / "index.sqlite"
        ingest(root, index_path, IngestOptions(settings=cfg.settings, full=True))
        with Index(index_path) as index:
            paths = frozenset(index.files())
            return evaluate(
                qs, lambda q: search(index, q.question, EVAL_DEPTH, weights=weights), indexed=lambda q: paths
            ).outcomes


def reference_rows(set_name: str, corpora: list[str], questions: list[Question]) -> list[Row]:
    """Score sklearn TF-IDF and bm25s on the default configuration's chunks and terms."""
    import bm25s
    from sklearn.feature_extraction.text import TfidfVectorizer

    _, root = SETS[set_name]
    outcomes: dict[str, list[QuestionOutcome]] = {"sklearn": [], "bm25s": []}
    per: dict[str, dict[str, Metrics]] = {"sklearn": {}, "bm25s": {}}
    started = time.perf_counter()
    for corpus in corpora:
        qs = [q for q in questions if q.corpus == corpus]
        index = MemoryIndex(corpus_chunks(root / corpus), TokenizerSettings())
        tokens = index.tokens()
        qtokens = {q.id: index.tokenizer.tokenize(q.question) for q in qs}
        tfidf = TfidfVectorizer(sublinear_tf=True, smooth_idf=True, analyzer=lambda t: t, lowercase=False)
        matrix = tfidf.fit_transform(tokens)
        bm25 = bm25s.BM25(k1=1.5, b=0.75)
        bm25.index(tokens, show_progress=False)

        def hits(scores: np.ndarray) -> list[Hit]:
            cand = np.flatnonzero(scores > 0)
            return [
                Hit(float(scores[i]), index.chunks[i])
                for i in cand[np.lexsort((cand, -scores[cand]))][:EVAL_DEPTH]
            ]

        def sk(q: Question) -> list[Hit]:
            return hits((matrix @ tfidf.transform([qtokens[q.id]]).T).toarray().ravel())

        def bm(q: Question) -> list[Hit]:
            known = [t for t in qtokens[q.id] if t in bm25.vocab_dict]
            return hits(bm25.get_scores(known)) if known else []

        for name, fn in (("sklearn", sk), ("bm25s", bm)):
            res = evaluate(qs, fn, indexed=lambda q: index.paths).outcomes
            outcomes[name].extend(res)
            per[name][corpus] = metrics(res)
    secs = time.perf_counter() - started
    return [Row(f"ref {n}", metrics(outcomes[n]), per[n], secs) for n in ("sklearn", "bm25s")]


def short(corpus: str) -> str:
    """Return a corpus name without its version (flask-3.1.3 -> flask)."""
    return corpus.rsplit("-", 1)[0].replace("tanstack-query-core", "tanstack")


def format_table(set_name: str, n: int, corpora: list[str], rows: Sequence[Row]) -> str:
    """Return a Markdown table: overall hit@1/hit@4/MRR@10/top-4 chars, then hit@4 and MRR per corpus."""
    head = ["config", "hit@1", "hit@4", "MRR@10", "top-4 ch"] + [f"{short(c)} h@4/MRR" for c in corpora]
    lines = [
        f"**{set_name}** ({n} questions)",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "|".join("---" for _ in head) + "|",
    ]
    for r in rows:
        m = r.overall
        cells = [
            r.label,
            f"{m.hit_at_1:.3f}",
            f"{m.hit_at_4:.3f}",
            f"{m.mrr_at_10:.3f}",
            f"{m.mean_top4_chars:,.0f}",
        ]
        cells += [f"{r.per_corpus[c].hit_at_4:.2f}/{r.per_corpus[c].mrr_at_10:.2f}" for c in corpora]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="docstring,dev")
    ap.add_argument("--corpora", default="", help="comma-separated corpus names or prefixes (default: all)")
    ap.add_argument("--lever", default="", help=f"comma-separated, from: {', '.join(LEVERS)}")
    ap.add_argument("--config", action="append", default=[], help="'label:key=value;key=value' (repeatable)")
    ap.add_argument("--refs", action="store_true", help="add the sklearn and bm25s references")
    ap.add_argument(
        "--real",
        action="store_true",
        help="build SQLite indexes with rag.ingest and use rag.retrieval.search",
    )
    ap.add_argument("--record", action="store_true", help=f"append the tables to {RECORD.name}")
    ap.add_argument("--title", default="", help="heading for the recorded tables")
    args = ap.parse_args()
    specs = list(args.config)
    for lever in filter(None, args.lever.split(",")):
        specs += [s for s in LEVERS[lever] if s not in specs]
    if not specs:
        specs = ["defaults:"]
    configs = [parse_config(s) for s in specs]
    wanted = [c for c in args.corpora.split(",") if c]
    out = []
    for set_name in filter(None, args.sets.split(",")):
        filename, _ = SETS[set_name]
        questions = load_questions(EVAL_DIR / filename)
        corpora = list(dict.fromkeys(q.corpus for q in questions if q.corpus))
        if wanted:
            corpora = [c for c in corpora if any(c.startswith(w) for w in wanted)]
        questions = [q for q in questions if q.corpus in corpora]
        rows = []
        for cfg in configs:
            rows.append(run_config(cfg, set_name, corpora, questions, args.real))
            print(
                f"  {set_name} {cfg.label}: hit@4 {rows[-1].overall.hit_at_4:.3f} "
                f"MRR {rows[-1].overall.mrr_at_10:.3f} ({rows[-1].seconds:.0f} s)",
                file=sys.stderr,
            )
        if args.refs:
            rows += reference_rows(set_name, corpora, questions)
        table = format_table(set_name, len(questions), corpora, rows)
        print(table + "\n")
        out.append(table)
    if args.record:
        defaults = ", ".join(f"{k}={v}" for k, v in TokenizerSettings().to_dict().items())
        cmd = "python " + " ".join(repr(a) if " " in a else a for a in sys.orig_argv[1:])  # as typed
        with RECORD.open("a") as f:
            f.write(
                f"\n### {args.title or args.lever or 'run'} — {datetime.date.today()}\n\n"
                f"`{cmd}`  \ndefaults: {defaults}\n\n" + "\n\n".join(out) + "\n"
            )


if __name__ == "__main__":
    main()
