"""A workspace: many repositories' indexes searched as one, ranking exactly as one index built over a
folder holding all of them (each path beginning with its repository's folder name)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FakeBackend, write_tree

from rag.cli import main
from rag.indexing.pipeline import IngestOptions, ingest
from rag.retrieval.opening import open_index
from rag.retrieval.retrieve import rank_question
from rag.retrieval.search import analyse, search
from rag.store.reader import Index
from rag.store.workspace import Workspace
from rag.weights import BM25


def workspace(paths: list[Path] | list[str]) -> Workspace:
    opened = open_index([str(p) for p in paths])
    assert isinstance(opened, Workspace)
    return opened


GATEWAY = {
    "gateway/auth.py": "import jwt\n\n\ndef validate_session_token(token, secret):\n"
    '    """Check the session token\'s signature and expiry before a request is routed."""\n'
    '    claims = jwt.decode(token, secret, algorithms=["HS256"])\n    return claims["sub"]\n\n\n'
    "def route(request):\n    user = validate_session_token(request.cookies['session'], KEY)\n"
    "    return forward(request, user)\n",
    "gateway/limits.py": "DEFAULT_RATE_LIMIT = 100  # requests a minute per user\n\n\n"
    "def rate_limited(user, count):\n    return count > DEFAULT_RATE_LIMIT\n",
    "README.md": "# Gateway\n\nRoutes requests to the services after the session token is validated.\n\n"
    "## Rate limits\n\nEach user may send 100 requests a minute.\n",
}
BILLING = {
    "src/invoice.js": "export function refundInvoice(invoice, gateway) {\n"
    "  // refunds go back to the original card\n  return gateway.refund(invoice.chargeId);\n}\n\n"
    "export class InvoiceStore {\n  constructor(db) { this.db = db; }\n"
    "  find(id) { return this.db.get('invoices', id); }\n}\n",
    "src/session.js": "// the billing service trusts the gateway's session token\n"
    "export function sessionUser(headers) {\n  return headers['x-user'];\n}\n",
    "docs/refunds.md": "# Refunds\n\nA refund goes back to the card that paid the invoice.\n",
}
SHARED = {
    "shared/tokens.py": "import hmac\n\n\ndef sign_token(payload, key):\n"
    '    """Sign a session token with HMAC-SHA256."""\n'
    "    return hmac.new(key, payload, 'sha256').hexdigest()\n\n\n"
    "def verify_token(token, key):\n    payload, signature = token.rsplit('.', 1)\n"
    "    return hmac.compare_digest(sign_token(payload, key), signature)\n",
    "shared/retry.py": "def retry(call, attempts=3):\n    for n in range(attempts):\n"
    "        try:\n            return call()\n        except TimeoutError:\n            continue\n",
    "CHANGELOG.md": "# Changes\n\n## 2.0\n\nTokens are signed with HMAC-SHA256; gateway callers must upgrade.\n",
}
# named so that one sorts before another's name with a slash after it ("shared-lib/" < "shared/")
REPOS = {
    "gateway": GATEWAY,
    "billing-service": BILLING,
    "shared": SHARED,
    "shared-lib": {"lib.py": "X = 1\n"},
}
QUESTIONS = [
    "where do we validate the session token?",
    "refund invoice to card",
    "how are tokens signed",
    "gateway",  # a repository's name: every chunk of it holds the word in its path
    "shared session token",
    "validate_session_token",  # one identifier: the definition scan
    "InvoiceStore",
    '"refunds go back"',  # quoted text
    "sesion tokn signature",  # typos, corrected against every repository's words
    "default rate limit",
    "retry attempts timeout",
    "billing service refunds",
]


def ingest_each(tmp_path: Path) -> tuple[list[Path], Path]:
    """Each repository ingested on its own, and one folder holding copies of all, ingested whole."""
    paths = []
    for name, files in REPOS.items():
        repo = write_tree(tmp_path / "repos" / name, files)
        paths.append(ingest(repo, options=IngestOptions(workers=1)).index_path)
        write_tree(tmp_path / "union" / name, files)
    union = ingest(tmp_path / "union", tmp_path / "union.sqlite", IngestOptions(workers=1)).index_path
    return paths, union


def ranked(index: Index | Workspace, question: str, **kwargs: object) -> list[tuple[str, int, int, float]]:
    return [
        (h.chunk.path, h.chunk.start_line, h.chunk.end_line, h.score)
        for h in search(index, question, **kwargs)
    ]


def test_workspace_ranks_exactly_as_one_index_over_all_repositories(tmp_path: Path) -> None:
    paths, union = ingest_each(tmp_path)
    with workspace(paths) as ws, Index(union) as one:
        assert ws.names == ["billing-service", "gateway", "shared-lib", "shared"]
        assert ws.view().n_chunks == one.view().n_chunks
        assert ws.view().length == one.view().length
        for question in QUESTIONS:
            expected = ranked(one, question, k=12, explain=True)
            assert expected, question
            assert ranked(ws, question, k=12, explain=True) == expected, question
            assert ranked(ws, question, k=12, prune=False) == expected, question
            mine = rank_question(ws, question, 6, explain=True, rerank="none")[0]
            theirs = rank_question(one, question, 6, explain=True, rerank="none")[0]
            assert [(h.passage.path, h.passage.start_line, h.score, h.contributions) for h in mine] == [
                (h.passage.path, h.passage.start_line, h.score, h.contributions) for h in theirs
            ], question
        # the repository's name is one of its chunks' words, as in the one index
        top = ranked(ws, "gateway", k=30)
        assert {p.split("/")[0] for p, *_ in top} >= {"gateway"}
        path = "billing-service/src/invoice.js"
        mine, theirs = (
            ws.chunk_terms(ws.file_chunk_ids(path)[0]),
            one.chunk_terms(one.file_chunk_ids(path)[0]),
        )
        assert mine == theirs and mine["servic"] > 0


def test_a_repository_whose_bound_cannot_enter_the_top_is_not_scored(tmp_path: Path) -> None:
    # "gateway" is every gateway chunk's path word; the other repositories hold it once, in prose
    paths, _ = ingest_each(tmp_path)
    with workspace(paths) as ws:
        query = analyse(ws, "gateway route forward")
        view = ws.view()
        from rag.retrieval.search import _query_terms

        terms = _query_terms(ws, view, dict(query.counts), {t: ws.term(t) for t in query.counts}, True)
        scales = [(t.term, BM25.query_scale(t.weight)) for t in terms]
        pruned = ws.top(view, scales, 2, prune=True)
        everything = ws.top(view, scales, 2, prune=False)
    assert sorted(pruned.scored) == sorted(everything.scored)
    assert everything.members_scored == 3 and everything.members_skipped == 0  # shared-lib holds none
    assert pruned.members_skipped >= 1
    assert pruned.members_scored + pruned.members_skipped == 3


def test_an_edited_repository_re_ingested_alone_keeps_the_workspace_exact(tmp_path: Path) -> None:
    paths, _ = ingest_each(tmp_path)
    edit = {
        "shared/tokens.py": SHARED["shared/tokens.py"] + "\n\ndef rotate_token(key):\n    return key[::-1]\n"
    }
    write_tree(tmp_path / "repos" / "shared", edit)
    ingest(tmp_path / "repos" / "shared", options=IngestOptions(workers=1))
    write_tree(tmp_path / "union" / "shared", edit)
    union = ingest(tmp_path / "union", tmp_path / "union.sqlite", IngestOptions(workers=1)).index_path
    with workspace(paths) as ws, Index(union) as one:
        for question in ("rotate token key", "how are tokens signed", "shared"):
            assert ranked(ws, question, k=10) == ranked(one, question, k=10)


def test_a_caller_sees_exactly_a_workspace_without_what_it_may_not_read(tmp_path: Path) -> None:
    hr = {"hr/salaries.py": 'def raise_salary(person, percent):\n    """Raise the session token budget."""\n'}
    full = []
    for name, files in REPOS.items():
        extra = {**hr, ".rag-access": "hr/ hr\n"} if name == "gateway" else {}
        full.append(
            ingest(write_tree(tmp_path / "full" / name, {**files, **extra}), options=IngestOptions(workers=1))
        )
        reference = write_tree(tmp_path / "reference" / name, files)
        ingest(reference, options=IngestOptions(workers=1))
    with (
        workspace([r.index_path for r in full]) as ws,
        workspace([tmp_path / "reference" / n / ".rag" / "index.sqlite" for n in REPOS]) as seen,
    ):
        for question in ("session token budget", "raise salary", "validate session token"):
            assert ranked(ws, question, k=10) == ranked(seen, question, k=10)
            assert ranked(ws, question, k=10, groups=frozenset({"hr"}))[0][0].startswith("gateway/hr/") or (
                question == "validate session token"
            )


def test_tf_idf_scoring_is_refused_on_a_workspace_in_one_line(tmp_path: Path) -> None:
    paths, _ = ingest_each(tmp_path)
    result = CliRunner().invoke(
        main, ["query", "--no-llm", "--scoring", "tfidf", *(f"--index={p}" for p in paths), "token"]
    )
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[-1] == (
        "Error: A workspace is scored with BM25 only (TF-IDF norms are per index) — drop --scoring tfidf, "
        "or query one index"
    )


def test_query_names_each_result_s_repository(tmp_path: Path) -> None:
    paths, _ = ingest_each(tmp_path)
    args = ["query", "--no-llm", "--json", *(f"--index={p}" for p in paths), "session token"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert found["repositories"] == ["billing-service", "gateway", "shared-lib", "shared"]
    repositories = {r["repository"] for r in found["results"]}
    assert repositories >= {"gateway", "shared"}
    assert all(r["path"].startswith(r["repository"] + "/") for r in found["results"])
    text = CliRunner().invoke(main, args[:2] + args[3:])
    assert "Searching 4 repositories: billing-service, gateway, shared-lib, shared" in text.stderr


def test_a_workspace_file_lists_repositories_and_index_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths, _ = ingest_each(tmp_path)
    listing = tmp_path / "org.txt"
    listing.write_text(
        "# our services\nrepos/gateway\n\nrepos/billing-service  # billing\n" + str(paths[2]) + "\n"
    )
    result = CliRunner().invoke(main, ["query", "--no-llm", "--json", "--workspace", str(listing), "refund"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["repositories"] == ["billing-service", "gateway", "shared"]
    monkeypatch.setenv("RAG_WORKSPACE", str(tmp_path / "repos"))  # a folder of repositories
    result = CliRunner().invoke(main, ["query", "--no-llm", "--json", "refund"])
    assert json.loads(result.stdout)["repositories"] == ["billing-service", "gateway", "shared-lib", "shared"]
    listing.write_text("repos/gateway\nrepos/nowhere\n")
    result = CliRunner().invoke(main, ["query", "--no-llm", "--workspace", str(listing), "refund"])
    assert result.exit_code == 1
    assert (
        result.output.strip().splitlines()[-1].startswith(f"Error: {listing}:2: no index for repos/nowhere")
    )


def test_two_repositories_of_one_name_are_refused(tmp_path: Path) -> None:
    a = ingest(write_tree(tmp_path / "a" / "api", GATEWAY), options=IngestOptions(workers=1)).index_path
    b = ingest(write_tree(tmp_path / "b" / "api", BILLING), options=IngestOptions(workers=1)).index_path
    result = CliRunner().invoke(main, ["query", "--no-llm", f"--index={a}", f"--index={b}", "token"])
    assert result.exit_code == 1
    assert "Two indexes of the workspace are of repositories named 'api'" in result.output


def test_related_and_status_read_a_workspace(tmp_path: Path) -> None:
    paths, union = ingest_each(tmp_path)
    indexes = [f"--index={p}" for p in paths]
    result = CliRunner().invoke(main, ["related", "--json", *indexes, "shared/shared/tokens.py:5"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert found["source"]["path"] == "shared/shared/tokens.py"
    from rag.retrieval.related import related

    theirs = related(str(union), "shared/shared/tokens.py", 5, rerank="none").found.hits
    assert [(r["path"], r["start_line"], r["score"]) for r in found["results"]] == [
        (h.chunk.path, h.chunk.start_line, h.score) for h in theirs
    ]
    assert all(r["repository"] == r["path"].split("/")[0] for r in found["results"])
    status = CliRunner().invoke(main, ["status", "--json", *indexes])
    assert status.exit_code == 0, status.output
    assert [s["repository"].rsplit("/", 1)[-1] for s in json.loads(status.stdout)["repositories"]] == list(
        REPOS
    )


def test_workspace_paths_sort_as_one_index_over_their_folder(tmp_path: Path) -> None:
    paths, union = ingest_each(tmp_path)
    with workspace(paths) as ws, Index(union) as one:
        assert ws.file_chunk_counts() == one.file_chunk_counts()
        mine, theirs = ws.places(ws.chunk_ids()), one.places(one.chunk_ids())
        assert [mine[c] for c in ws.chunk_ids()] == [theirs[c] for c in one.chunk_ids()]


def test_the_planning_prompt_names_every_repository_and_the_paths_begin_with_theirs(tmp_path: Path) -> None:
    from rag.answer.plan import planning_prompt
    from rag.retrieval.retrieve import glance

    paths, _ = ingest_each(tmp_path)
    with workspace(paths) as ws:
        seen = glance(ws, "where do we validate the session token?")
    assert seen.repository == "billing-service, gateway, shared-lib, shared"
    assert seen.languages == ("Python", "Markdown", "JavaScript/TypeScript")
    user = planning_prompt("where do we validate the session token?", seen).user
    assert '<repository name="billing-service, gateway, shared-lib, shared"' in user
    assert "gateway/gateway/auth.py:1-7 validate_session_token" in user


def test_the_mcp_server_serves_a_workspace(tmp_path: Path) -> None:
    from mcp_client import payload, server, session_run

    paths, union = ingest_each(tmp_path)
    args = [f"--index={p}" for p in paths]
    _, (found, status) = session_run(
        server(*args), [("search", {"query": "session token", "k": 4}), ("status", {})]
    )
    results = payload(found)["results"]
    with Index(union) as one:
        expected = [(h.passage.path, h.score) for h in rank_question(one, "session token", 4)[0]]
    assert [(r["path"], r["score"]) for r in results] == expected
    assert all(r["repository"] == r["path"].split("/")[0] for r in results)
    assert [s["repository"].rsplit("/", 1)[-1] for s in payload(status)["repositories"]] == list(REPOS)


def test_ingest_a_workspace_ingests_each_repository_that_changed(tmp_path: Path) -> None:
    for name, files in REPOS.items():
        write_tree(tmp_path / "repos" / name, files)
    listing = tmp_path / "org.txt"
    listing.write_text("".join(f"repos/{name}\n" for name in REPOS))
    first = CliRunner().invoke(main, ["ingest", "--workspace", str(listing), "--workers", "1"])
    assert first.exit_code == 0, first.output
    assert [line.split(" ", 1)[0] for line in first.stdout.strip().splitlines()] == ["Indexed"] * 4
    write_tree(tmp_path / "repos" / "shared", {"shared/retry.py": "def retry(call):\n    return call()\n"})
    again = CliRunner().invoke(main, ["ingest", "--workspace", str(listing), "--workers", "1"])
    lines = again.stdout.strip().splitlines()
    assert sum(line.startswith("Index is up to date") for line in lines) == 3, lines
    query = CliRunner().invoke(
        main, ["query", "--no-llm", "--json", "--workspace", str(listing), "retry call"]
    )
    assert json.loads(query.stdout)["results"][0]["path"] == "shared/shared/retry.py"
    neither = CliRunner().invoke(main, ["ingest"])
    assert neither.exit_code == 2
    assert "Give REPO, or --workspace FILE to ingest each repository it lists" in neither.output


def test_rag_index_may_list_several_indexes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths, _ = ingest_each(tmp_path)
    monkeypatch.setenv("RAG_INDEX", ":".join(str(p) for p in paths[:2]))
    result = CliRunner().invoke(main, ["query", "--no-llm", "--json", "refund"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["repositories"] == ["billing-service", "gateway"]


def test_the_answering_model_searches_the_whole_workspace_and_cites_repository_paths(
    tmp_path: Path, fake_backend: FakeBackend
) -> None:
    from rag.answer.ask import ask
    from rag.retrieval.retrieve import Request

    paths, _ = ingest_each(tmp_path)
    fake_backend.search({"query": "sign_token hmac"})
    fake_backend.queue(
        "The gateway checks it [gateway/gateway/auth.py:4-7], signed by [shared/shared/tokens.py:4-6]."
    )
    where = tuple(str(p) for p in paths)
    outcome = ask(where, Request("where do we validate the session token?", 1), fake_backend, follow_ups=1)
    answer = outcome.answer
    assert answer is not None
    assert [h.chunk.path for h in outcome.retrieval.hits] == ["gateway/gateway/auth.py"]
    assert [h.chunk.path for h in answer.rounds[0].hits][0] == "shared/shared/tokens.py"
    assert [(c.path, c.valid) for c in answer.citations] == [
        ("gateway/gateway/auth.py", True),
        ("shared/shared/tokens.py", True),
    ]


def test_a_workspace_kept_open_reads_a_member_updated_since(tmp_path: Path) -> None:
    paths, _ = ingest_each(tmp_path)
    with workspace(paths) as ws:
        before = ranked(ws, "rotate signing key", k=5)
        # an incremental ingest updates the index file in place: the member's chunk ids grow
        write_tree(
            tmp_path / "repos" / "billing-service",
            {"src/rotate.js": "export function rotateSigningKey() {}\n"},
        )
        ingest(tmp_path / "repos" / "billing-service", options=IngestOptions(workers=1))
        after = ranked(ws, "rotate signing key", k=5)
        with workspace(paths) as fresh:
            assert after == ranked(fresh, "rotate signing key", k=5) != before
        assert after[0][0] == "billing-service/src/rotate.js"


def test_postings_read_outside_a_snapshot_are_those_of_their_own_term(tmp_path: Path) -> None:
    paths, union = ingest_each(tmp_path)
    with workspace(paths) as ws, Index(union) as one:
        token, session = ws.term("token"), ws.term("session")
        assert token is not None and session is not None
        expected = one.term("token")
        assert expected is not None
        assert list(token[0]) == list(expected[0]) and list(token[1]) == list(expected[1])
        assert len(session[0]) == len(one.term("session")[0])  # type: ignore[index]


def test_a_typo_is_corrected_by_the_words_the_caller_may_read(tmp_path: Path) -> None:
    # `toker` is frequent only in a restricted folder: a public caller's `tokem` is `token`
    hidden = {f"hr/t{i}.py": f"def f{i}():\n    return toker, toker\n" for i in range(6)}
    public = {"app/auth.py": "def check(token):\n    return token\n"}
    full = ingest(write_tree(tmp_path / "full" / "api", {**public, **hidden, ".rag-access": "hr/ hr\n"}))
    other = ingest(write_tree(tmp_path / "full" / "web", {"web.py": "x = 1\n"}))
    with workspace([full.index_path, other.index_path]) as ws:
        assert [c.term for c in analyse(ws, "tokem").corrections] == ["token"]
        assert [c.term for c in analyse(ws, "tokem", groups=frozenset({"hr"})).corrections] == ["toker"]
    with Index(full.index_path) as one:
        assert [c.term for c in analyse(one, "tokem").corrections] == ["token"]
        assert [c.term for c in analyse(one, "tokem", groups={"hr"}).corrections] == ["toker"]  # type: ignore[arg-type]


def test_a_plain_tokenizer_workspace_is_scored_with_bm25_by_default(tmp_path: Path) -> None:
    from rag.text.tokenizer import TokenizerSettings

    plain = IngestOptions(TokenizerSettings(mode="plain"), workers=1)
    paths = [
        ingest(write_tree(tmp_path / n, f), options=plain).index_path for n, f in list(REPOS.items())[:2]
    ]
    with workspace(paths) as ws:
        found = ranked(ws, "refund invoice", k=4)
        assert found and found == ranked(ws, "refund invoice", k=4, scoring="bm25")


def test_ingest_of_a_workspace_folder_indexes_its_repositories_not_indexed_yet(tmp_path: Path) -> None:
    for name, files in REPOS.items():
        write_tree(tmp_path / "org" / name, files)
    ingest(tmp_path / "org" / "gateway", options=IngestOptions(workers=1))
    result = CliRunner().invoke(main, ["ingest", "--workspace", str(tmp_path / "org"), "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert all((tmp_path / "org" / n / ".rag" / "index.sqlite").is_file() for n in REPOS)


def test_rag_cluster_in_the_environment_yields_to_indexes_named_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths, _ = ingest_each(tmp_path)
    monkeypatch.setenv("RAG_CLUSTER", "127.0.0.1:1")  # nothing listens there
    result = CliRunner().invoke(main, ["query", "--no-llm", "--json", f"--index={paths[0]}", "refund"])
    assert result.exit_code == 0, result.output
    assert CliRunner().invoke(main, ["status", f"--index={paths[0]}"]).exit_code == 0
    asked = CliRunner().invoke(main, ["query", "--no-llm", "refund"])
    assert asked.exit_code == 1 and "No Ray cluster answers at 127.0.0.1:1" in asked.output
