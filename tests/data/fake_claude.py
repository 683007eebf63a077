"""A stand-in for `claude -p`, run by the tests through a `claude` wrapper placed first on PATH.

FAKE_CLAUDE_MODE picks the behaviour: ok (default), error (a JSON error object, exit 1),
text-error (text on stdout, exit 1), empty (a successful but empty result), garbage (not JSON),
hang (never answers; writes its pid to FAKE_CLAUDE_PID if set), daemon (answers, and leaves a
process behind that holds its stdout open), setsid-daemon (the same, the process in a session of
its own). FAKE_CLAUDE_LOG, when set, receives a JSON record of how it was called (the last call);
FAKE_CLAUDE_CALLS, when set, one JSON line a call.
The ok answer cites the first document of the prompt, and one span that was never sent; a search
planning prompt (no documents, a request for keyword searches) is answered with FAKE_CLAUDE_PLAN
(default: a line of words).
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import time


def main() -> int:
    argv = sys.argv[1:]
    stdin_is_pipe = stat.S_ISFIFO(os.fstat(0).st_mode)
    prompt = sys.stdin.read()
    log = os.environ.get("FAKE_CLAUDE_LOG")
    if log:
        with open(log, "w", encoding="utf-8") as f:
            json.dump({"argv": argv, "cwd": os.getcwd(), "stdin": prompt, "stdin_is_pipe": stdin_is_pipe}, f)
    calls = os.environ.get("FAKE_CLAUDE_CALLS")
    if calls:
        with open(calls, "a", encoding="utf-8") as f:
            f.write(json.dumps({"argv": argv, "stdin": prompt}) + "\n")
    mode = os.environ.get("FAKE_CLAUDE_MODE", "ok")
    as_json = "--output-format" in argv and argv[argv.index("--output-format") + 1] == "json"
    if mode == "hang":
        pid_file = os.environ.get("FAKE_CLAUDE_PID")
        if pid_file:
            with open(pid_file, "w", encoding="utf-8") as f:
                f.write(str(os.getpid()))
        time.sleep(60)
        return 0
    if mode in ("daemon", "setsid-daemon"):  # answers, and leaves a process behind holding stdout
        import subprocess

        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"],
                         start_new_session=mode == "setsid-daemon")
    if mode == "text-error":
        print("Error: Invalid API key · Please run /login")
        return 1
    if mode == "garbage":
        print("<html>not json</html>")
        return 0
    if mode == "error":
        print(json.dumps({"type": "result", "subtype": "error_during_execution", "is_error": True,
                          "result": "Credit balance is too low", "usage": {}}))
        return 1
    m = re.search(r'<document index="1" path="([^"]*)" lines="(\d+)-(\d+)"', prompt)
    if mode == "empty" or not prompt.strip():
        answer = ""
    elif "Write keyword searches" in prompt:
        answer = os.environ.get("FAKE_CLAUDE_PLAN", "check_password load_hash verify")
    elif m:
        answer = f"From the documents: see [{m[1]}:{m[2]}-{m[3]}]. Also [nowhere.py:1-2]."
    else:
        answer = "The documents do not say."
    if not as_json:
        print(answer)
        return 0
    print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": answer,
                      "duration_ms": 5, "num_turns": 1, "session_id": "fake", "total_cost_usd": 0.001,
                      "usage": {"input_tokens": 120, "output_tokens": 14, "service_tier": "standard"}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
