"""Retrieval evaluation: labelled questions in, hit@k, MRR@10 and passage size out.

A question is found at rank r when its r-th passage has the same path as one of its
answers and a line span that overlaps that answer's span (1-based, inclusive; touching
lines overlap, adjacent spans do not). A passage's span is its context, the lines a reader is
shown and a model is sent; beside each figure goes the same figure for the match lines alone
(the chunk that scored), so that growing passages never passes for better retrieval. hit@k is the share of questions found within the
top k; MRR@10 is the mean of 1/r over questions found within the top 10 (0 otherwise).
Beside them goes the mean size in characters of the top-4 passages, because the overlap
rule rewards long passages that would bloat the prompt (the mean is kept within 3,000).

An answer whose path is not in the index is a labelling error: it is listed, and a
question none of whose answers is in the index is not scored (rather than counted as a miss).
The questions run as a caller with the given access groups: a path the caller may not read
is reported exactly as an absent one, and never ranked.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag.errors import InputError, command
from rag.ranking.hits import Hit
from rag.ranking.order import PROMPT_K  # the passages whose size is reported: a prompt's
from rag.retrieval.opening import open_index
from rag.retrieval.retrieve import rank_question
from rag.retrieval.search import DEFAULT_SCORING, DEFAULT_TOP_K
from rag.semantic.registry import DEFAULT_MODE
from rag.store.paths import CLUSTER_PREFIX, Where, default_index_path, locate_index
from rag.store.workspace import Reader, parts
from rag.weights import DEFAULTS, RankingWeights

if TYPE_CHECKING:
    from rag.indexing.pipeline import IngestReport

KS = (1, 4, 10)  # the hit@k figures reported
EVAL_DEPTH = 10  # passages scored per question: MRR@10 and hit@10 need ten
MAX_PASSAGE_CHARS = 3000  # the most the mean size of those passages may be, for a prompt of four
MISS_K = DEFAULT_TOP_K  # a question is listed as a miss when no hit is in its top MISS_K
SCHEMA_HINT = (
    'each line must be {"id", "question", "answers": [{"path", "start_line", "end_line"}], "corpus"?}'
)


@dataclass(frozen=True, slots=True)
class Span:
    """A labelled answer: a path relative to the repository root and a 1-based inclusive line span."""

    path: str
    start_line: int
    end_line: int


@dataclass(frozen=True, slots=True)
class Question:
    """One labelled question, and where it was read from."""

    id: str
    question: str
    answers: tuple[Span, ...]
    corpus: str | None = None
    line: int = 0  # line number in the questions file, for messages


@dataclass(frozen=True, slots=True)
class Metrics:
    """Retrieval figures over a set of questions."""

    questions: int
    hit_at_1: float
    hit_at_4: float
    hit_at_10: float
    mrr_at_10: float
    mean_top4_chars: float  # mean characters of the top-4 passages, pooled over questions
    match_hit_at_4: float = 0.0  # hit@4 and MRR@10 of the match lines alone
    match_mrr_at_10: float = 0.0


@dataclass(frozen=True, slots=True)
class QuestionOutcome:
    """What retrieval returned for one scored question."""

    question: Question
    rank: int | None  # rank of the first hit within the top EVAL_DEPTH, None if there is none
    hits: tuple[Hit, ...]  # best first, at most EVAL_DEPTH
    match_rank: int | None = None  # the same, on the match lines alone


@dataclass(frozen=True, slots=True)
class LabelError:
    """An answer whose path is not in the index: the label (or the index) is wrong, not retrieval."""

    id: str
    corpus: str | None
    line: int
    answer: Span


@dataclass(frozen=True, slots=True)
class EvalReport:
    """Metrics overall and per corpus, each scored question's outcome, and the labelling errors."""

    overall: Metrics
    per_corpus: dict[str, Metrics]  # corpus -> metrics, in order of first appearance
    outcomes: tuple[QuestionOutcome, ...]
    label_errors: tuple[LabelError, ...] = ()
    unscored: tuple[Question, ...] = ()  # no answer path in the index
    k: int = MISS_K
    indexes: dict[str, str] = field(default_factory=dict)  # corpus (or "") -> index file used
    semantic: bool = False  # the semantic stage reordered some question's passages
    notes: tuple[str, ...] = ()  # the semantic stage's, once each: its model failed

    @property
    def misses(self) -> tuple[QuestionOutcome, ...]:
        """Return the scored questions with no hit in the top k."""
        return tuple(o for o in self.outcomes if o.rank is None or o.rank > self.k)


def load_questions(path: Path) -> list[Question]:
    """Read a JSONL file of labelled questions, raising InputError that names the file and line."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path} does not exist — pass a JSONL file of labelled questions")
    if not path.is_file():
        raise InputError(f"{path} is not a file — pass a JSONL file of labelled questions")
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{path} is not UTF-8 text ({exc.reason}) — pass a JSONL file of labelled questions"
        ) from None
    questions: list[Question] = []
    seen: dict[str, int] = {}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        q = _parse_question(path, n, line)
        if q.id in seen:
            raise InputError(
                f"{path}:{n}: id {q.id!r} is also on line {seen[q.id]} — give each question its own id"
            )
        seen[q.id] = n
        questions.append(q)
    if not questions:
        raise InputError(f"{path} has no questions — {SCHEMA_HINT}")
    return questions


def _parse_question(path: Path, n: int, line: str) -> Question:
    where = f"{path}:{n}"
    try:
        row = json.loads(line)
    except ValueError as exc:
        raise InputError(f"{where}: not valid JSON ({exc}) — {SCHEMA_HINT}") from None
    except RecursionError:  # nested deeper than the parser's stack
        raise InputError(f"{where}: JSON nested too deeply to read — {SCHEMA_HINT}") from None
    if not isinstance(row, dict):
        raise InputError(f"{where}: expected a JSON object, got {type(row).__name__} — {SCHEMA_HINT}")
    for name in ("id", "question", "answers"):
        if name not in row:
            raise InputError(f"{where}: missing field {name!r} — {SCHEMA_HINT}")
    qid = row["id"]
    if isinstance(qid, bool) or not isinstance(qid, str | int) or str(qid) == "":
        raise InputError(f"{where}: 'id' must be a non-empty string — {SCHEMA_HINT}")
    text = row["question"]
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{where}: 'question' must be a non-empty string — {SCHEMA_HINT}")
    corpus = row.get("corpus")
    if corpus is not None and (not isinstance(corpus, str) or corpus in ("", ".", "..") or "/" in corpus):
        raise InputError(f"{where}: 'corpus' must be a folder name such as \"flask-3.1.3\" — {SCHEMA_HINT}")
    answers = row["answers"]
    if not isinstance(answers, list) or not answers:
        raise InputError(f"{where}: 'answers' must be a non-empty list — {SCHEMA_HINT}")
    return Question(str(qid), text, tuple(_parse_span(where, i, a) for i, a in enumerate(answers)), corpus, n)


def _parse_span(where: str, i: int, answer: object) -> Span:
    if not isinstance(answer, dict):
        raise InputError(f"{where}: answers[{i}] must be an object — {SCHEMA_HINT}")
    for name in ("path", "start_line", "end_line"):
        if name not in answer:
            raise InputError(f"{where}: answers[{i}] is missing field {name!r} — {SCHEMA_HINT}")
    path, start, end = answer["path"], answer["start_line"], answer["end_line"]
    if not isinstance(path, str) or not path:
        raise InputError(f"{where}: answers[{i}].path must be a path relative to the repository root")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)) or not 1 <= start <= end:
        raise InputError(
            f"{where}: answers[{i}] needs whole-number lines with 1 <= start_line <= end_line, "
            f"got {start!r}-{end!r}"
        )
    return Span(path.removeprefix("./"), start, end)


def overlaps(hit: Hit, answer: Span, match: bool = False) -> bool:
    """Return whether a passage counts as a hit for an answer: same path, overlapping line spans
    (its context's, or with `match` its match's)."""
    c = hit.chunk if match else hit.passage
    return c.path == answer.path and c.start_line <= answer.end_line and answer.start_line <= c.end_line


def first_hit_rank(hits: Sequence[Hit], answers: Iterable[Span], match: bool = False) -> int | None:
    """Return the 1-based rank of the first passage that hits an answer, within the top EVAL_DEPTH."""
    answers = tuple(answers)
    for rank, hit in enumerate(hits[:EVAL_DEPTH], 1):
        if any(overlaps(hit, a, match) for a in answers):
            return rank
    return None


def metrics(outcomes: Sequence[QuestionOutcome]) -> Metrics:
    """Compute hit@1/4/10, MRR@10 and the mean top-4 passage size over `outcomes`."""
    n = len(outcomes)
    ranks = [o.rank for o in outcomes]
    hit = [sum(1 for r in ranks if r is not None and r <= k) / n if n else 0.0 for k in KS]
    mrr = sum(1.0 / r for r in ranks if r is not None and r <= EVAL_DEPTH) / n if n else 0.0
    sizes = [len(h.passage.text) for o in outcomes for h in o.hits[:PROMPT_K]]
    chars = sum(sizes) / len(sizes) if sizes else 0.0
    matched = [o.match_rank for o in outcomes]
    match_hit = sum(1 for r in matched if r is not None and r <= PROMPT_K) / n if n else 0.0
    match_mrr = sum(1.0 / r for r in matched if r is not None and r <= EVAL_DEPTH) / n if n else 0.0
    return Metrics(n, hit[0], hit[1], hit[2], mrr, chars, match_hit, match_mrr)


def evaluate(
    questions: Sequence[Question],
    retrieve: Callable[[Question], Sequence[Hit]],
    k: int = MISS_K,
    indexed: Callable[[Question], Container[str]] | None = None,
) -> EvalReport:
    """Run `retrieve` on every question and score the top EVAL_DEPTH passages it returns.

    `retrieve` returns passages best first (only the first EVAL_DEPTH are used). `indexed`,
    when given, returns the paths in the index a question runs against: answers outside
    it are labelling errors, and a question with no answer inside it is not scored.
    `k` only decides which questions `EvalReport.misses` lists.
    """
    if not 1 <= k <= EVAL_DEPTH:
        raise ValueError(f"k must be between 1 and {EVAL_DEPTH}")
    outcomes: list[QuestionOutcome] = []
    label_errors: list[LabelError] = []
    unscored: list[Question] = []
    for q in questions:
        answers = q.answers
        if indexed is not None:
            paths = indexed(q)
            label_errors.extend(LabelError(q.id, q.corpus, q.line, a) for a in answers if a.path not in paths)
            answers = tuple(a for a in answers if a.path in paths)
            if not answers:
                unscored.append(q)
                continue
        hits = tuple(retrieve(q)[:EVAL_DEPTH])
        outcomes.append(
            QuestionOutcome(q, first_hit_rank(hits, answers), hits, first_hit_rank(hits, answers, match=True))
        )
    corpora: dict[str, list[QuestionOutcome]] = {}
    for o in outcomes:
        if o.question.corpus is not None:
            corpora.setdefault(o.question.corpus, []).append(o)
    return EvalReport(
        overall=metrics(outcomes),
        per_corpus={c: metrics(os_) for c, os_ in corpora.items()},
        outcomes=tuple(outcomes),
        label_errors=tuple(label_errors),
        unscored=tuple(unscored),
        k=k,
    )


class Indexes:
    """The indexes a questions file runs against: one per corpus under a root, or a single one.

    With `corpus_root`, a question naming a corpus runs against the index of
    CORPUS_ROOT/<corpus>, which is built (or brought up to date: ingest is incremental)
    the first time it is needed. Other questions run against `index_path`, or the index
    found from the current directory.
    """

    def __init__(
        self,
        index_path: Path | Where | None = None,
        corpus_root: Path | None = None,
        full: bool = False,
        on_ingest: Callable[[IngestReport], None] | None = None,
        groups: frozenset[str] = frozenset(),
    ) -> None:
        self.index_path = index_path
        self.groups = groups
        self.corpus_root = corpus_root
        self.full = full
        self.on_ingest = on_ingest
        self._stack = ExitStack()
        self._open: dict[str, tuple[Reader, frozenset[str]]] = {}

    def __enter__(self) -> Indexes:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def get(self, q: Question) -> tuple[Reader, frozenset[str]]:
        """Return the index for a question and the set of paths it holds that the caller may read
        (a restricted path is reported as an absent one is)."""
        key = q.corpus if self.corpus_root is not None and q.corpus is not None else ""
        if key not in self._open:
            where = self.index_path
            path: Path | Where
            if key:
                path = self._corpus_index(key)
            elif isinstance(where, tuple) or (isinstance(where, str) and where.startswith(CLUSTER_PREFIX)):
                path = where
            else:
                path = locate_index(where)
            index = open_index(path)
            self._stack.callback(index.close)
            for part, _ in parts(index):
                if part.access_changed():  # as a query does: the rules stored are no longer the repository's
                    from rag.sources.access import AccessList
                    from rag.sources.names import ACCESS_FILE

                    AccessList.load(part.manifest.root)  # a line that cannot be parsed: name it
                    raise InputError(
                        f"{ACCESS_FILE} changed since the index at {part.path} was built — re-run "
                        f"`{command('ingest')} {part.manifest.root}`"
                    )
            self._open[key] = (index, frozenset(index.readable_files(self.groups)))
        return self._open[key]

    def paths(self) -> dict[str, str]:
        """Return which index file each corpus ("" for the default) used."""
        return {key: str(index.path) for key, (index, _) in self._open.items()}

    def _corpus_index(self, corpus: str) -> Path:
        assert self.corpus_root is not None
        report = corpus_index(Path(self.corpus_root) / corpus, self.full)
        if self.on_ingest is not None:
            self.on_ingest(report)
        return report.index_path


def corpus_index(root: Path, full: bool = False) -> IngestReport:
    """Build or update the index of a corpus at its default place, ROOT/.rag/index.sqlite."""
    from rag.indexing.options import IngestOptions
    from rag.indexing.pipeline import ingest  # loaded only when a corpus index is needed, as in the CLI

    return ingest(Path(root), default_index_path(Path(root)), IngestOptions(full=full))


def run_eval(
    questions_path: Path,
    index_path: Path | Where | None = None,
    corpus_root: Path | None = None,
    k: int = MISS_K,
    explain: bool = False,
    full: bool = False,
    on_ingest: Callable[[IngestReport], None] | None = None,
    scoring: str = DEFAULT_SCORING,
    groups: frozenset[str] = frozenset(),
    rerank: str = DEFAULT_MODE,
    weights: RankingWeights = DEFAULTS,
) -> EvalReport:
    """Load a questions file, rank each question against its index as a query does (rag.retrieval.retrieve.rank:
    the lexical ranking, then the semantic stage as `rerank` says), as a caller with `groups` sees it,
    and score the result (`weights`: what the list is ranked with, a benchmark's DEFAULTS._replace(...))."""
    questions = load_questions(questions_path)
    if corpus_root is not None:
        check_corpora(questions_path, questions, corpus_root)
    with Indexes(index_path, corpus_root, full, on_ingest, groups) as indexes:
        notes: dict[str, None] = {}
        reranked = False  # the stage reordered at least one question's passages

        def retrieve(q: Question) -> list[Hit]:
            nonlocal reranked
            hits, note = rank_question(
                indexes.get(q)[0],
                q.question,
                EVAL_DEPTH,
                explain=explain,
                groups=groups,
                scoring=scoring,
                rerank=rerank,
                weights=weights,
            )
            if note is not None:
                notes[note] = None
            reranked = reranked or any(h.semantic is not None for h in hits)
            return hits

        report = evaluate(questions, retrieve, k, indexed=lambda q: indexes.get(q)[1])
        return replace(report, indexes=indexes.paths(), semantic=reranked, notes=tuple(notes))


def check_corpora(questions_path: Path, questions: Iterable[Question], corpus_root: Path) -> None:
    """Raise InputError naming the first question whose corpus is not a folder of `corpus_root`."""
    checked: set[str] = set()
    for q in questions:
        if q.corpus is None or q.corpus in checked:
            continue
        if not (Path(corpus_root) / q.corpus).is_dir():
            raise InputError(
                f"{questions_path}:{q.line}: corpus {q.corpus!r} is not a folder of {corpus_root} "
                "— fetch it, or fix --corpus-root or the question's corpus"
            )
        checked.add(q.corpus)


def report_dict(report: EvalReport, misses: bool = False) -> dict[str, Any]:
    """Return the report as JSON-ready data; with `misses`, also the misses and what came back."""
    out: dict[str, Any] = {
        "overall": asdict(report.overall),
        "per_corpus": {c: asdict(m) for c, m in report.per_corpus.items()},
        "label_errors": [
            {"id": e.id, "corpus": e.corpus, "line": e.line, **asdict(e.answer)} for e in report.label_errors
        ],
        "unscored": [q.id for q in report.unscored],
        "indexes": report.indexes,
        "semantic_rerank": report.semantic,
    }
    if misses:
        out["k"] = report.k
        out["misses"] = [_miss_dict(o, report.k) for o in report.misses]
    return out


def _miss_dict(o: QuestionOutcome, k: int) -> dict[str, Any]:
    q = o.question
    return {
        "id": q.id,
        "corpus": q.corpus,
        "line": q.line,
        "question": q.question,
        "answers": [asdict(a) for a in q.answers],
        "rank": o.rank,
        "results": [
            {
                "rank": r,
                "score": h.score,
                "path": h.chunk.path,
                "start_line": h.chunk.start_line,
                "end_line": h.chunk.end_line,
                "kind": h.chunk.kind,
                "symbol": h.chunk.symbol,
                "context_start_line": h.passage.start_line,
                "context_end_line": h.passage.end_line,
                "chars": len(h.passage.text),
                "explain": [t._asdict() for t in h.contributions],
            }
            for r, h in enumerate(o.hits[:k], 1)
        ],
    }


def iter_corpora(questions: Iterable[Question]) -> Iterator[str]:
    """Yield each corpus named by the questions once, in order of first appearance."""
    seen: set[str] = set()
    for q in questions:
        if q.corpus is not None and q.corpus not in seen:
            seen.add(q.corpus)
            yield q.corpus
