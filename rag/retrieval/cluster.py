"""A workspace past one machine: its repositories' indexes held by the actors of a Ray cluster.

`rag serve` (serve()) places the workspace's indexes on actors, each holding some repositories
(Members, the class that holds them in one process), and names them in a directory actor. A query
pointed at the cluster (connect()) asks every actor at once: each scores its repositories with the
workspace's statistics and answers with its best; the workspace merges them and ranks as in
process, with identical results (rag.store.workspace, whose hosts the actors are).

What a query meets, and says in one line:
- an actor that dies, or a cluster that stops answering, during a query: the query fails
  (ClusterError), naming what to restart; no answer is made from the repositories left, because it
  would rank differently from the whole workspace without saying so in its figures;
- a cluster that cannot be reached: the same, before Ray is started (one TCP connection);
- a repository re-ingested while served: each request an actor answers reads one state of each
  index it holds; the first request after the ingest commits reads the new one.

The actors live as long as the `rag serve` that made them (they are not detached): no process
outlives its command. Ray is imported only here, when a cluster is used (the cluster extra).
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from rag.errors import ClusterError, InputError, RagError, command
from rag.indexing.options import IngestOptions
from rag.indexing.pipeline import IngestReport, ingest
from rag.retrieval.members import Members
from rag.store.paths import CLUSTER_PREFIX
from rag.store.reader import Index
from rag.store.workspace import Workspace

NAMESPACE = "rag"  # the Ray namespace the actors are named in
DIRECTORY = "rag-workspace"  # the actor that names the actors holding the served workspace
ACTOR = "rag-members-{}"
CLUSTER_ENV = "RAG_CLUSTER"
INSTALL_HINT = "A Ray cluster needs the cluster extra — pip install 'rag-code[cluster]'"
QUERY_TIMEOUT = 60.0  # seconds a query waits for the actors
REACH_TIMEOUT = 3.0  # seconds to connect to the cluster's address before Ray is started


def ray_module() -> Any:
    """Ray, imported; InputError naming the extra when it is not installed."""
    try:
        import ray
    except ImportError:
        raise InputError(INSTALL_HINT) from None
    return ray


def location(address: str) -> str:
    """The Where of a workspace served on the cluster at `address`."""
    return CLUSTER_PREFIX + address


class MembersActor:
    """A Ray actor's state: the repositories it holds (made a Ray actor class by serve())."""

    def __init__(self, paths: list[str]) -> None:
        self.members = Members(paths)

    def ready(self) -> list[str]:
        """The names of the repositories it holds."""
        return list(self.members.indexes)

    def run(self, method: str, *args: Any) -> Any:
        """Answer one request of a workspace (Members.run)."""
        return self.members.run(method, *args)


class Directory:
    """The named actor that lists the actors holding a served workspace."""

    def __init__(self, actors: list[str]) -> None:
        self.names = actors

    def actors(self) -> list[str]:
        """The names of the actors, in the order they were placed."""
        return self.names


class RayHost:
    """One actor, as a workspace asks it (rag.store.workspace.Host)."""

    def __init__(self, ray: Any, actor: Any, name: str, address: str) -> None:
        self.ray = ray
        self.actor = actor
        self.name = name
        self.address = address

    def submit(self, method: str, *args: Any) -> Any:
        return self.actor.run.remote(method, *args)

    def collect(self, pending: list[Any]) -> list[Any]:
        return collect(self.ray, pending, self.address)

    @property
    def indexes(self) -> dict[str, Index]:
        return {}

    def close(self) -> None:
        pass


def collect(ray: Any, pending: list[Any], address: str) -> list[Any]:
    """The answers of actor calls, waited for together; what goes wrong, as one-line errors."""
    exceptions = ray.exceptions
    try:
        return list(ray.get(pending, timeout=QUERY_TIMEOUT))
    except exceptions.GetTimeoutError:
        raise ClusterError(
            f"The Ray cluster at {address} did not answer within {QUERY_TIMEOUT:.0f} s — check it with "
            f"`ray status --address {address}`, or restart `{command('serve')}`"
        ) from None
    except exceptions.RayTaskError as exc:  # the actor raised: a user's error is told as in process
        cause = getattr(exc, "cause", None)
        if isinstance(cause, RagError):
            raise cause from None
        raise
    except (exceptions.RayActorError, exceptions.ActorUnavailableError) as exc:
        raise ClusterError(
            f"An actor of the workspace served on the Ray cluster at {address} died or became unreachable "
            f"during the query ({type(exc).__name__}); its repositories could not be searched — restart "
            f"`{command('serve')}`"
        ) from None


def reachable(address: str) -> None:
    """Raise ClusterError unless something listens at the cluster's address (host:port)."""
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host or "127.0.0.1", int(port)), timeout=REACH_TIMEOUT).close()
    except ValueError:
        raise InputError(
            f"{address} is not a Ray cluster's address — give HOST:PORT (e.g. 127.0.0.1:6379)"
        ) from None
    except OSError as exc:
        raise ClusterError(
            f"No Ray cluster answers at {address} ({exc.strerror or exc}) — start one with `ray start --head` "
            f"and serve a workspace on it with `{command('serve')}`"
        ) from None


def join(address: str) -> Any:
    """Join the cluster at `address` as a driver (once per process); return Ray."""
    ray = ray_module()
    reachable(address)
    if not ray.is_initialized():
        ray.init(
            address=address,
            namespace=NAMESPACE,
            logging_level="ERROR",
            log_to_driver=False,
            include_dashboard=False,
        )
    return ray


def connect(address: str) -> Workspace:
    """The workspace served on the cluster at `address`."""
    ray = join(address)
    try:
        directory = ray.get_actor(DIRECTORY, namespace=NAMESPACE)
    except ValueError:
        raise ClusterError(
            f"No workspace is served on the Ray cluster at {address} — run "
            f"`{command('serve')} --workspace FILE --cluster {address}` first"
        ) from None
    names = collect(ray, [directory.actors.remote()], address)[0]
    hosts = []
    for name in names:
        try:
            hosts.append(RayHost(ray, ray.get_actor(name, namespace=NAMESPACE), name, address))
        except ValueError:
            raise ClusterError(
                f"The actor {name} of the workspace served at {address} is gone — restart `{command('serve')}`"
            ) from None
    return Workspace(hosts, where=location(address))


class Served(NamedTuple):
    """A workspace placed on a cluster: each actor's name and the repositories it holds."""

    address: str
    actors: list[tuple[str, list[str]]]


def shares(paths: Sequence[str], actors: int) -> list[list[str]]:
    """Split index files among `actors`, by their chunk counts: each next-largest to the lightest share."""
    sizes = []
    for path in paths:
        with Index(path) as index:
            sizes.append((index.manifest.n_chunks, path))
    out: list[list[str]] = [[] for _ in range(max(1, min(actors, len(paths))))]
    load = [0] * len(out)
    for n, path in sorted(sizes, reverse=True):
        i = load.index(min(load))
        out[i].append(path)
        load[i] += n
    return out


def serve(paths: Sequence[str], address: str, actors: int) -> tuple[Served, Callable[[], None]]:
    """Place the indexes at `paths` on `actors` actors of the cluster at `address` and name them;
    return what was placed, and the function that takes them down (they also end with this process)."""
    ray = join(address)
    try:
        ray.get_actor(DIRECTORY, namespace=NAMESPACE)
    except ValueError:
        pass
    else:
        raise ClusterError(
            f"A workspace is already served on the Ray cluster at {address} — stop that `{command('serve')}` first"
        )
    holder = ray.remote(num_cpus=0)(MembersActor)
    handles = []
    for i, share in enumerate(shares(paths, actors)):
        name = ACTOR.format(i)
        handles.append((name, holder.options(name=name, namespace=NAMESPACE).remote(list(share))))
    held = collect(ray, [h.ready.remote() for _, h in handles], address)
    directory = (
        ray.remote(num_cpus=0)(Directory)
        .options(name=DIRECTORY, namespace=NAMESPACE)
        .remote([name for name, _ in handles])
    )
    collect(ray, [directory.actors.remote()], address)

    def stop() -> None:
        for actor in [directory, *(h for _, h in handles)]:
            ray.kill(actor)

    return Served(address, [(name, names) for (name, _), names in zip(handles, held)]), stop


def wait_forever(sleep: Callable[[float], None] = time.sleep) -> None:
    """Block until interrupted (the server's life)."""
    while True:
        sleep(3600)


def ingest_on_cluster(
    address: str, repos: Sequence[tuple[str, str]], full: bool = False
) -> list[IngestReport]:
    """Ingest each (repository, index file) in one Ray task (one process each, on a core of its own);
    return their reports, in order."""
    ray = join(address)
    task = ray.remote(num_cpus=1)(ingest_task)
    return collect(ray, [task.remote(root, path, full) for root, path in repos], address)


def ingest_task(root: str, index_path: str, full: bool) -> IngestReport:
    """One repository's ingest, as a Ray task runs it."""
    return ingest(root, index_path, IngestOptions(workers=1, full=full))


def cluster_address(given: str | None) -> str | None:
    """The cluster a command was pointed at: --cluster, else RAG_CLUSTER, else None."""
    return given or os.environ.get(CLUSTER_ENV) or None
