"""The long version of the hostile-repository and kill tests, and the speed of hostile shapes.

    python bench/hostile.py [--trials 20] [--corpus flask-3.1.3]
    python bench/hostile.py --shapes [--mb 1] [--rounds 3] [--only NAME]

Builds the hostile tree with a 50 MB single-line file, ingests it, checks every readable
line is in some chunk; then SIGKILLs `ingest.py --full` on a real corpus at random points
and checks after each kill that the previous index still loads and answers identically.

--shapes instead times redaction and chunking of each hostile shape (one short unit repeated
to --mb megabytes, each in a child process cut off after 60 s) and prints seconds per MB, the
best of --rounds children (on a machine that other work loads, one run can take half as long
again); the budget is 1 s per MB.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from hostile import build_hostile_repo, readable_lines

from bench.common import CORPORA, PROJECT, versions

# name -> (file name, the unit repeated); the file name picks the chunker, and the unit's shape is
# one that made a rule or a chunker slow (or could: each new rule's gate and candidates)
SHAPES: dict[str, tuple[str, str]] = {
    "begin-lines": ("keys.txt", "-----BEGIN " + "PRIVATE KEY-----\n"),
    "mysql-words": ("run.sh", "mysql "),
    "mysql-flags": ("run.sh", "mysql -u "),
    "md-hash-lines": ("notes.md", "#\n"),
    "md-headings": ("notes.md", "# a\n"),
    "py-short-lines": ("gen.py", "x=1\n"),
    "py-def-lines": ("gen.py", "def a():0\n"),
    "escaped-newlines": ("data.json", "\\n"),
    "escaped-lines": ("nb.ipynb", '"a\\"b\\n",\n'),
    "continued-lines": ("run.sh", "a \\\n"),
    "continued-literals": ("conf.py", '"a" \\\n'),
    "parenthesised": ("conf.py", 'x = ("a" "b"\n'),
    "block-scalars": ("conf.yaml", "a: >\n"),
    "indented-block": ("conf.yaml", "a: |\n  b\n"),
    "encoded-key-prefix": ("kube.yaml", "LS0tLS1CRUdJT "),
    "secret-manifest": ("secret.yaml", "kind: Secret\nk: QUJDREVGR0hJSktM\n"),
    "putty-heads": ("k.txt", "PuTTY-User-Key-File-2: Private-Lines: 1\n"),
    "php-defines": ("wp.php", "define('DB_PASSWORD', 'a1!"),
    "env-defaults": ("a.py", "os.environ.get('TOKEN', 'a"),
    "sas-sigs": ("u.txt", "?sv=1&sig=" + "aB3dE5fG7hJ9kL2mN4pQ"),
    "aws-ids": ("a.csv", "AKIA" + "Z7QW3RT5YU8IOP2L,"),
    "pgpass-colons": ("pgpass.sh", "pgpass a:1:b:c:"),
    "requirepass": ("redis.conf", "requirepass "),
    "name-words": ("a.py", "password = '" + "a-" * 200 + "'\n"),
    # the credential contexts of rag.secrets.nature, a word every 4 to 33 characters: a name and
    # its value, a table's separators, header and cells, a name field, an XML element, a flag,
    # client calls, a URL's user, SQL's IDENTIFIED BY
    "password-quotes": ("a.py", "password='"),
    "token-quotes": ("a.js", 'token="'),
    "quoted-pairs": ("a.py", '"password", "' + "Zq8mN3" + "pL7kR2" + '", '),
    "key-commas": ("a.csv", "key,"),
    "header-rows": ("a.csv", "a,password,b\n"),
    "last-cells": ("a.tsv", "a\tpassword\n"),
    "token-cells": ("a.md", "| token |"),
    "name-fields": ("a.yaml", "- name: DB_PASSWORD\n"),
    "xml-elements": ("a.xml", "<password>"),
    "flag-values": ("run.sh", "--auth-token " + "aB3dE5fG7hJ9" + "kL2mx "),
    "auth-calls": ("a.py", "auth("),
    "login-calls": ("a.py", "login(a, 'b'"),
    "url-users": ("a.txt", "https://" + "aB3dE5fG7hJ9" + "kL2m@"),
    "identified-by": ("a.sql", "identified by '"),
    # literals joined into one value, interpolation defaults, a line of random values and commas
    "joined-lists": ("a.js", '["Xk9","mQ2"].join("") '),
    "python-joins": ("a.py", '"".join(["a1B2c3D4", "e5F6g7H8"]) '),
    "interpolation-defaults": ("a.yml", "${a:-"),
    "piped-defaults": ("a.j2", "{{ password | default('"),
    "random-cells": ("a.json", "Vq7KpZ3mX9tLw2RbN8yHcF4d,"),
    "symbol-quotes": ("a.py", '"Zh3c^Wv~mS4*HPj'),
    "oracle-logins": ("a.sh", "sqlplus a/"),
    "base64-lines": ("mail.eml", "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkwYWJjZGVm\n"),
    "base64-tokens": ("a.txt", "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkwYWJjZGVm "),
    "userinfo-ats": ("pip.conf", "a" * 150 + ":" + "b" * 40 + "@"),
    "join-words": ("a.ps1", "(x) -join '' "),
    "memorable-quotes": ("a.py", '"Lantern-Ferry-Nightshift-09" '),
    # a command's password flags, Terraform variables that never close, names assigned and joined
    "curl-users": ("run.sh", "curl -u a:"),
    "docker-words": ("run.sh", "docker docker login "),
    "variable-heads": ("main.tf", 'variable "db_password" {\n  sensitive = true\n'),
    "named-literals": ("a.py", 'a1 = "b2c3"\nb1 = "d4e5"\nc = a1 + b1 + '),
    # blocks read upward for their openers, literals joined anywhere, Lua's long strings, setters,
    # XML properties, generated passwords standing bare
    "indented-tokens": ("a.yaml", "    k: " + "Vq7KpZ3mX9tLw2" + "RbN8yHcF4d\n"),
    "plus-joined": ("a.js", '"aB3dE5fG7h" + '),
    "long-brackets": ("a.lua", "password = [["),
    "setter-calls": ("a.kt", 'setPassword("'),
    "xml-name-pairs": ("a.xml", "<name>password</name>"),
    "bare-symbols": ("a.log", "Fq#7~vTp8*" + "lsHZ!Q2m="),
    # short generated values standing alone, literals given to a join or joined by a leading `+`,
    # SQL*Plus's CONNECT
    "short-tokens": ("a.txt", "aB3dE5fG7hJ9 "),
    "literal-lists": ("a.js", "join(['aB3dE5fG7', 'hJ9kL2mN4p', "),
    "leading-plus": ("a.java", '"aB3dE5fG7h"\n    + '),
    "connect-lines": ("a.sql", "CONNECT a/b\n"),
    "equals-values": ("Makefile", "PASS ?= a1=b2="),
    "char-lists": ("a.cs", "new string(new[] { 'a','B','3',"),
    "hex-escapes": ("a.php", '"\\x41\\x62\\x33'),
    "composer-auth": ("Dockerfile", "composer config --auth http-basic.a b "),
    "secure-strings": ("a.ps1", "ConvertTo-SecureString 'aB3dE5fG7h' "),
    "net-use-users": ("a.cmd", "net use \\\\a\\b /user:c "),
    "code-arrays": ("a.c", "char a[] = { 65, 66, 67, 68, 69, 70, 71, 72, "),
    "heredocs": ("a.hcl", "password = <<-EOT\n"),
    "identified-bare": ("a.sql", "IDENTIFIED BY Abc_1234 "),
    "code-groups": ("a.conf", "AB-12-CD-"),
    "password-flags": ("run.sh", "--db-password "),
    "stated-values": ("notes.txt", "the password is "),
    "array-declarators": ("a.c", "char password[] = password[8] = "),
    "dash-groups": ("a.txt", "1-" * 20 + "x "),
    "digest-columns": (
        "dump.sql",
        "INSERT INTO t (sha256, k) VALUES ('" + "a1" * 32 + "', 'Vq7KpZ3mX9tLw2RbN8yHcF4d'),",
    ),
    "ezconnect-logins": ("a.py", " a/Bcdefgh1@"),
    "stated-for-users": ("notes.txt", "the password for a b c "),
    "spelt-literals": ("a.pl", '"' + "\\x{41}" * 9),
    "login-arguments": ("run.sh", "a b login --x "),
    "login-lines": ("run.sh", "a login b\n"),
    "rightward-literals": ("a.R", '"abcdefg1" -> '),
    "libpq-last": ("a.py", "a=b password=c "),
    "beside-names": ("a.ex", '@db_password "'),
    "beside-values": ("a.tcl", "set db_password abcdefg1 "),
    "yaml-defaults": ("a.yaml", "  default: abcdefgh1\n"),
    "format-joins": ("a.py", '"%s%s" % ("abcd", "efgh"), '),
    "named-lists": ("a.py", '_K = ["abcd", "efgh"]\n"".join(_J)\n'),
    "batch-passwords": ("a.sh", "htpasswd -b a b "),
    "yaml-binary": ("a.yaml", "k: !!binary |\n  QUJDRA==\n"),
    "colon-bytes": ("a.conf", 'NETWORK_KEY="' + "a1:" * 15 + 'b2"\n'),
    # a data-only dump: INSERTs that name no columns and no CREATE TABLE to read them from
    "column-less-inserts": ("dump.sql", "INSERT INTO `t` VALUES (1,'a');\n"),
}

QUESTIONS = ["how is the session cookie signed", "register a blueprint", "json response", "url_for"]


def answers(index_path: Path) -> list[list[tuple[str, int, float]]]:
    from rag import Index, search

    with Index(index_path) as index:
        return [
            [(h.chunk.path, h.chunk.start_line, h.score) for h in search(index, q, k=10)] for q in QUESTIONS
        ]


_SHAPE_CHILD = """
import json, sys, time
from rag.chunking import chunk_file
from rag.secrets import redact
name, unit, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
text = unit * max(1, size // len(unit))
t = time.perf_counter(); redact(text); redact_s = time.perf_counter() - t
t = time.perf_counter(); chunk_file(name, text); chunk_s = time.perf_counter() - t
print(json.dumps([len(text.encode()), redact_s, chunk_s]))
"""


def shapes(mb: float, only: str | None, rounds: int) -> None:
    """Print the seconds per MB that redaction and chunking take on each hostile shape."""
    print(versions())
    print(f"load average {os.getloadavg()[0]:.1f}; best of {rounds} runs")
    print(f"{'shape':20} {'file':12} {'redact s/MB':>12} {'chunk s/MB':>11}")
    for shape, (name, unit) in SHAPES.items():
        if only and shape != only:
            continue
        runs = []
        try:
            for _ in range(rounds):
                done = subprocess.run(
                    [sys.executable, "-c", _SHAPE_CHILD, name, unit, str(int(mb * 1_000_000))],
                    capture_output=True,
                    text=True,
                    timeout=60,
                    cwd=PROJECT,
                    check=True,
                )
                runs.append(json.loads(done.stdout))
        except subprocess.TimeoutExpired:
            print(f"{shape:20} {name:12} {'> 60 s':>12}")
            continue
        size = runs[0][0]
        redact_s, chunk_s = min(run[1] for run in runs), min(run[2] for run in runs)
        print(
            f"{shape:20} {name:12} {redact_s / (size / 1e6):12.2f} {chunk_s / (size / 1e6):11.2f}", flush=True
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--corpus", default="flask-3.1.3")
    parser.add_argument("--shapes", action="store_true", help="time the hostile shapes instead")
    parser.add_argument("--mb", type=float, default=1.0, help="size of each shape, in MB")
    parser.add_argument("--only", help="time this shape only")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each shape; the best is printed")
    args = parser.parse_args()
    if args.shapes:
        shapes(args.mb, args.only, args.rounds)
        return
    from rag import Index, ingest

    print(versions())
    with tempfile.TemporaryDirectory() as tmp:
        repo = build_hostile_repo(Path(tmp) / "hostile", big_line_mb=50)
        start = time.perf_counter()
        report = ingest(repo)
        print(
            f"hostile repo: {report.files} files, {report.chunks} chunks in {time.perf_counter() - start:.2f} s; "
            f"skipped {dict(sorted(report.skipped.items()))}"
        )
        covered: dict[str, set[int]] = {}
        with Index(report.index_path) as index:
            for path, s, e in index._query(
                "SELECT f.path, c.start_line, c.end_line FROM chunks c JOIN files f ON f.id = c.file_id"
            ):
                covered.setdefault(path, set()).update(range(s, e + 1))
        expected = readable_lines(repo)
        lost = {p: len(lines - covered.get(p, set())) for p, lines in expected.items()}
        lost = {p: n for p, n in lost.items() if n}
        print(f"readable text files: {len(expected)}; files with lines in no chunk: {lost or 'none'}")

        corpus = CORPORA / args.corpus
        index_path = Path(tmp) / "kill.sqlite"
        ingest_cmd = [
            sys.executable,
            str(PROJECT / "ingest.py"),
            str(corpus),
            "--index",
            str(index_path),
            "--full",
        ]
        subprocess.run(ingest_cmd, check=True, capture_output=True)
        before = answers(index_path)
        start = time.perf_counter()
        subprocess.run(ingest_cmd, check=True, capture_output=True)
        duration = time.perf_counter() - start
        rng = random.Random(0)
        killed = intact = 0
        for _ in range(args.trials):
            proc = subprocess.Popen(ingest_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0, duration))
            proc.send_signal(signal.SIGKILL)
            killed += proc.wait() == -signal.SIGKILL
            intact += answers(index_path) == before
        print(
            f"kill trials on {args.corpus} (full ingest {duration:.2f} s): {args.trials} trials, "
            f"{killed} killed mid-run, previous index intact and identical after {intact}/{args.trials}"
        )


if __name__ == "__main__":
    main()
