"""The two scripts as a user runs them: real subprocesses, from the repo and from elsewhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_tree

PROJECT = Path(__file__).resolve().parent.parent


def run(script: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(PROJECT / script), *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_ingest_then_query_from_inside_and_outside_the_repo(worked_repo: Path, tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(worked_repo)], check=True)
    outside = tmp_path / "work"
    outside.mkdir()
    done = run("ingest.py", str(worked_repo), "--tokenizer", "plain", cwd=outside)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Indexed 4 files (4 chunks)")
    assert done.stderr == ""  # no progress bar when stderr is not a terminal
    status = subprocess.run(
        ["git", "-C", str(worked_repo), "status", "--porcelain"], capture_output=True, text=True, check=True
    ).stdout
    assert ".rag" not in status
    for cwd in (outside, worked_repo, worked_repo):
        asked = run("query.py", "--json", "--no-llm", "-k", "2", "billing refunds", cwd=cwd)
        assert asked.returncode == 0, asked.stderr
        got = [(r["path"], round(r["score"], 4)) for r in json.loads(asked.stdout)["results"]]
        assert got == [("refunds.txt", 0.3922), ("team.txt", 0.2472)]


def test_errors_are_one_line_without_traceback(tmp_path: Path) -> None:
    empty = tmp_path / "nowhere"
    empty.mkdir()
    asked = run("query.py", "--no-llm", "anything", cwd=empty)
    assert asked.returncode == 1
    assert asked.stdout == ""
    assert asked.stderr.strip().splitlines() == [
        f"Error: No index found for {empty.resolve()} — run `python {PROJECT / 'ingest.py'} REPO` first "
        "(or pass --index PATH)"
    ]


CONSOLE_SCRIPT = "import sys; sys.argv[0] = '/opt/venv/bin/rag'; from rag.cli import main; main()"


@pytest.mark.parametrize(
    ("argv", "typed"),
    [
        (["QUERY_PY"], "python QUERY_DIR/ingest.py"),
        (["-m", "rag", "query"], "python -m rag ingest"),
        (["-c", CONSOLE_SCRIPT, "query"], "rag ingest"),
    ],
    ids=["script", "module", "console-script"],
)
def test_a_hint_names_the_command_the_user_typed(tmp_path: Path, argv: list[str], typed: str) -> None:
    empty = tmp_path / "nowhere"
    empty.mkdir()
    script = os.path.relpath(PROJECT / "query.py", empty)  # as typed: `python ../../rag/query.py`
    argv = [script if a == "QUERY_PY" else a for a in argv]
    typed = typed.replace("QUERY_DIR", os.path.dirname(script))
    env = {**os.environ, "PYTHONPATH": str(PROJECT)}
    asked = subprocess.run(
        [sys.executable, *argv, "--no-llm", "anything"], cwd=empty, capture_output=True, text=True, env=env
    )
    assert (asked.returncode, asked.stdout) == (1, "")
    assert asked.stderr == (
        f"Error: No index found for {empty.resolve()} — run `{typed} REPO` first (or pass --index PATH)\n"
    )
    asked = subprocess.run([sys.executable, *argv, " "], cwd=empty, capture_output=True, text=True, env=env)
    assert asked.stderr == (
        "Error: The question is empty — ask something, e.g. "
        f'{typed.replace("ingest", "query")} "how are passages scored?"\n'
    )


def test_version_names_the_installed_distribution(tmp_path: Path) -> None:
    from importlib.metadata import version

    env = {**os.environ, "PYTHONPATH": str(PROJECT)}
    done = subprocess.run(
        [sys.executable, "-m", "rag", "--version"], cwd=tmp_path, capture_output=True, text=True, env=env
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, f"rag {version('rag-code')}\n", "")


def test_retrieval_only_does_not_import_the_sdk(worked_repo: Path) -> None:
    """Nor the backends, the ingest pipeline, the chunkers, pathlib or dataclasses (each costs
    startup time): a query loads what retrieval needs."""
    run("ingest.py", str(worked_repo), cwd=worked_repo)
    code = (
        "import sys; sys.argv=['query.py','--json','--no-llm','billing']; before = set(sys.modules)\n"
        "from rag.cli import query_main\n"
        "try:\n    query_main()\nexcept SystemExit:\n    pass\n"
        # what the query loaded itself (an editable install's finder imports pathlib at startup)
        "print([m for m in ('anthropic', 'rag.answer.backends', 'rag.indexing.pipeline', 'rag.chunking.python', 'pathlib',"
        " 'dataclasses')"
        " if m in sys.modules and m not in before],"
        " file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=worked_repo,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(PROJECT), "PATH": "/usr/bin:/bin"},
    )
    assert done.stderr.splitlines() == [f"Searching {worked_repo.resolve()}", "[]"]
    assert json.loads(done.stdout)["results"]


def test_progress_goes_to_stderr_only(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "r", {"a.md": "# A\n\nalpha beta gamma\n"})
    done = run("ingest.py", str(repo), cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.count("\n") == 1


def test_a_reader_that_stops_early_ends_the_answer_quietly(worked_repo: Path, tmp_path: Path) -> None:
    assert run("ingest.py", str(worked_repo), cwd=worked_repo).returncode == 0
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    claude = bin_dir / "claude"  # answers with 300 KB, which the reader below never takes
    claude.write_text(
        f"#!{sys.executable}\nimport json, sys\nsys.stdin.read()\n"
        "print(json.dumps({'type': 'result', 'result': 'refunds ' * 40000, 'is_error': False}))\n"
    )
    claude.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "RAG_BACKEND": "claude"}
    env.pop("ANTHROPIC_API_KEY", None)
    env["RAG_SEARCH"] = "question"  # one `claude` run: the answer
    proc = subprocess.Popen(
        [sys.executable, str(PROJECT / "query.py"), "billing refunds"],
        cwd=worked_repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(5) == b"refun"  # like `| head -c 5`
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 1
    # not "Error: Broken pipe — check that the path exists and is writable"
    assert err == f"Searching {worked_repo.resolve()}\n"


def _children(pid: int) -> set[int]:
    """The processes whose parent is `pid` (Linux /proc)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    if int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.add(int(entry))
            except (OSError, IndexError, ValueError):
                continue
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP"])
def test_a_terminated_ingest_ends_its_workers_and_keeps_the_old_index(tmp_path: Path, sig: str) -> None:
    import signal
    import time

    files = {
        f"pkg/module_{i:02d}.py": "".join(
            f"def handler_{i}_{j}(request, session):\n    return render(request, 'page_{j}.html', session.get('k{j}'))\n\n\n"
            for j in range(700)
        )
        for i in range(40)
    }  # 4 MB: enough for worker processes
    repo = write_tree(tmp_path / "big", files)
    assert run("ingest.py", str(repo), "--workers", "2", cwd=tmp_path).returncode == 0
    before = run("query.py", "--json", "--no-llm", "handler session render", cwd=repo).stdout
    proc = subprocess.Popen(
        [sys.executable, str(PROJECT / "ingest.py"), str(repo), "--full", "--workers", "2"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # as from a terminal: a suite run under nohup would hand the ingest a SIGHUP it ignores, as it should
        preexec_fn=lambda: signal.signal(getattr(signal, sig), signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    workers: set[int] = set()
    while len(workers) < 2 and time.monotonic() < deadline and proc.poll() is None:
        workers = {c for c in _children(proc.pid) if _alive(c)}
        time.sleep(0.02)
    assert len(workers) >= 2, "the workers never started"
    proc.send_signal(getattr(signal, sig))  # to the ingest alone, as `kill` or a closed terminal does
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0 and "Traceback" not in err
    deadline = time.monotonic() + 10
    while any(map(_alive, workers)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(map(_alive, workers)), "a worker outlived the ingest"
    assert [p.name for p in (repo / ".rag").iterdir() if ".tmp-" in p.name] == []
    assert run("query.py", "--json", "--no-llm", "handler session render", cwd=repo).stdout == before


def test_version_of_a_checkout_that_was_never_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata
    import tomllib

    from rag.cli.options import rag_version

    def not_installed(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    project = tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"]
    assert rag_version() == f"{project['version']} (a checkout, not installed)"
