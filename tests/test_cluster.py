"""A workspace served on a real local Ray cluster (`ray start --head` on loopback): the same results as
in process, ingest in Ray tasks, and what a query says when an actor dies or the cluster is away."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import write_tree
from test_workspace import REPOS

from rag.errors import ClusterError
from rag.indexing.pipeline import IngestOptions, ingest
from rag.retrieval.retrieve import rank_question
from rag.store.workspace import Workspace

ray = pytest.importorskip("ray")

QUESTIONS = ["where do we validate the session token?", "refund invoice to card", "gateway", "InvoiceStore"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rag(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rag", *args], capture_output=True, text=True, timeout=120, env=env
    )


class Served:
    def __init__(self, address: str, workspace: Path, repos: Path, server: subprocess.Popen[str]) -> None:
        self.address, self.workspace, self.repos, self.server = address, workspace, repos, server


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A local Ray cluster, the test repositories ingested, and `rag serve` holding them on 2 actors."""
    root = tmp_path_factory.mktemp("cluster")
    listing = root / "org.txt"
    for name, files in REPOS.items():
        ingest(write_tree(root / "repos" / name, files), options=IngestOptions(workers=1))
    listing.write_text("".join(f"repos/{name}\n" for name in REPOS))
    port = free_port()
    address = f"127.0.0.1:{port}"
    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # short: Ray's socket paths must fit 107 bytes
    start = [sys.executable, "-m", "ray.scripts.scripts", "start", "--head", f"--port={port}", "--num-cpus=2"]
    start += ["--node-ip-address=127.0.0.1", "--include-dashboard=false", "--disable-usage-stats"]
    start += [f"--temp-dir={temp}"]
    server = None
    try:
        started = subprocess.run(start, capture_output=True, text=True, timeout=120)
        assert started.returncode == 0, started.stderr
        server = subprocess.Popen(
            [sys.executable, "-m", "rag", "serve", "--workspace", str(listing), "--cluster", address],
            stderr=subprocess.PIPE,
            text=True,
        )
        assert server.stderr is not None
        first = server.stderr.readline()
        assert first.startswith("Serving 4 repositories on 2 actors of the Ray cluster at"), first
        yield Served(address, listing, root / "repos", server)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=60)
            assert server.stderr is not None
            server.stderr.close()
        if ray.is_initialized():
            ray.shutdown()
        stop = [sys.executable, "-m", "ray.scripts.scripts", "stop", "--force"]
        subprocess.run(stop, capture_output=True, timeout=120)
        shutil.rmtree(temp, ignore_errors=True)


def local(served: Served) -> Workspace:
    from rag.retrieval.opening import open_index

    opened = open_index(tuple(str(served.repos / n / ".rag" / "index.sqlite") for n in REPOS))
    assert isinstance(opened, Workspace)
    return opened


def listed(index: Workspace, question: str) -> list[tuple[str, int, float]]:
    hits = rank_question(index, question, 6, explain=True, rerank="none")[0]
    return [(h.passage.path, h.passage.start_line, h.score) for h in hits]


def test_a_query_on_the_cluster_answers_as_in_process(served: Served) -> None:
    from rag.retrieval.cluster import connect

    remote = connect(served.address)
    assert [type(h).__name__ for h in remote.hosts] == ["RayHost", "RayHost"]
    with local(served) as here:
        for question in QUESTIONS:
            assert listed(remote, question) == listed(here, question), question
    result = rag("query", "--no-llm", "--json", "--cluster", served.address, "session token")
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert found["index"] == f"ray://{served.address}"
    with local(served) as here:
        expected = [
            (h.passage.path, h.score) for h in rank_question(here, "session token", 4, rerank="auto")[0]
        ]
    assert [(r["path"], r["score"]) for r in found["results"]] == expected
    assert {r["repository"] for r in found["results"]} >= {"gateway", "shared"}
    # related, by a path inside one repository's folder, as the shell would name it
    source = served.repos / "shared" / "shared" / "tokens.py"
    like = rag("related", "--json", "--rerank", "none", "--cluster", served.address, f"{source}:5")
    assert like.returncode == 0, like.stderr
    from rag.retrieval.related import related

    mine = related(
        tuple(str(served.repos / n / ".rag" / "index.sqlite") for n in REPOS), str(source), 5, rerank="none"
    )
    assert [(r["path"], r["score"]) for r in json.loads(like.stdout)["results"]] == [
        (h.chunk.path, h.score) for h in mine.found.hits
    ]


def test_ingest_runs_one_ray_task_a_repository_and_the_served_actors_see_it(served: Served) -> None:
    from rag.retrieval.cluster import connect

    write_tree(
        served.repos / "shared", {"shared/rotate.py": "def rotate_signing_key(old):\n    return old[::-1]\n"}
    )
    result = rag("ingest", "--workspace", str(served.workspace), "--cluster", served.address)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 4 and sum("Index is up to date" in line for line in lines) == 3, lines
    remote = connect(served.address)
    top = listed(remote, "rotate signing key")[0]
    assert top[0] == "shared/shared/rotate.py"
    with local(served) as here:
        assert listed(remote, "rotate signing key") == listed(here, "rotate signing key")


def test_an_unreachable_cluster_is_one_line(tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    start = time.monotonic()
    result = rag("query", "--no-llm", "--cluster", f"127.0.0.1:{port}", "token")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"Error: No Ray cluster answers at 127.0.0.1:{port} (Connection refused) — start one with "
        "`ray start --head` and serve a workspace on it with `python -m rag serve`"
    ]
    assert time.monotonic() - start < 30  # no wait for Ray's own connection timeouts


def test_the_mcp_server_serves_the_workspace_on_the_cluster(served: Served) -> None:
    from mcp_client import payload, server, session_run

    _, (found,) = session_run(
        server("--cluster", served.address), [("search", {"query": "session token", "k": 4})]
    )
    results = payload(found)["results"]
    with local(served) as here:
        expected = [(h.passage.path, h.score) for h in rank_question(here, "session token", 4)[0]]
    assert [(r["path"], r["score"]) for r in results] == expected
    assert payload(found)["index"] == f"ray://{served.address}"


def test_an_actor_that_dies_mid_query_fails_the_query_in_one_line(served: Served) -> None:
    from rag.retrieval.cluster import connect

    remote = connect(served.address)  # the handles are held, as `rag mcp --cluster` holds them
    listed(remote, "session token")
    ray.kill(remote.hosts[0].actor, no_restart=True)  # type: ignore[attr-defined]
    with pytest.raises(ClusterError) as raised:
        listed(remote, "session token")
    assert str(raised.value) == (
        f"An actor of the workspace served on the Ray cluster at {served.address} died or became unreachable "
        "during the query (ActorDiedError); its repositories could not be searched — restart `rag serve`"
    )
    result = rag("query", "--no-llm", "--cluster", served.address, "token", env={**os.environ})
    assert result.returncode == 1
    assert (
        result.stderr.strip().splitlines()[-1].startswith("Error: The actor rag-members-0 of the workspace")
    )
