#!/usr/bin/env python3
"""The hook's latency with the resident engine against a fresh engine per call.

Usage: scripts/hook-latency.py SENS_BENCH_BINARY PROJECT_DIR (a git repository)

Times the first `engine hook` call (which starts the engine and indexes the
project), 20 more calls to the running engine, and 5 runs of `engine check` (a
fresh process that indexes and judges the same write), prints both medians and
their ratio, and ends the engine it started.
"""
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

binary, project = sys.argv[1], os.path.abspath(sys.argv[2])
added = "fn added() -> u32 { 1 }\n"
hook_input = json.dumps({
    "hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": project,
    "tool_input": {"file_path": os.path.join(project, "added.rs"), "content": added},
})


def timed(args, stdin=None):
    started = time.perf_counter()
    done = subprocess.run(args, input=stdin, capture_output=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{args} failed: {done.stderr.decode()}")
    return elapsed


def hook():
    return timed([binary, "engine", "hook", project, "--idle-secs", "60"], hook_input.encode())


try:
    first = hook()
    resident = [hook() for _ in range(20)]
    with tempfile.NamedTemporaryFile("w", suffix=".rs") as content:
        content.write(added)
        content.flush()
        fresh = [timed([binary, "engine", "check", project, "--file", "added.rs",
                        "--content", content.name]) for _ in range(5)]
finally:
    with open(os.path.join(project, ".sens", "engine.pid")) as pid:
        os.killpg(int(pid.read()), signal.SIGKILL)

print(f"first hook call (starts the engine, indexes): {first * 1000:.0f} ms")
print(f"resident engine, median of 20 calls: {statistics.median(resident) * 1000:.1f} ms")
print(f"fresh engine per call (engine check), median of 5: {statistics.median(fresh) * 1000:.0f} ms")
print(f"ratio fresh / resident: {statistics.median(fresh) / statistics.median(resident):.0f}")
