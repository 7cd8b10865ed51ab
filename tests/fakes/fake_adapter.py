"""A scriptable adapter for the runner's tests (run with sys.executable).

It implements one toy operation, ``echo``: input ``{"value": V}`` gives output ``{"value": V}``;
input ``{"reject": CODE}`` gives a reject with CODE. Misbehaviour is chosen per case by words in
the case id, so one process can crash on one case and answer the next:

  crash   exit(3) mid-request          hang    never answer
  garbage a non-JSON line              wrong-seq  a reply with another seq
  huge    a 17 MiB reply line          flood   5 MiB on stderr, then the reply
  error   an error reply               skip    a skipped reply
  invalid a reply failing the schema   wrongval   a wrong output value
  chatty  a debug line on stdout before the reply
  pyrepr  a reply failing the schema: the output is the Python repr of the input value
  large   the reply padded with whitespace to a 4 MiB line (still valid JSON)

and process-wide by flags: --crash-on-start, --hang-on-start, --bad-handshake,
--always-reject CODE, --ops a,b, --oneshot, --log-starts FILE, --no-flush, --grandchild FILE
(start a sleeping child that inherits stdout and stderr; append "ADAPTER_PID CHILD_PID" to FILE),
and --escape HOW FILE: start a sleeper that escapes the adapter's process group and ignores
SIGTERM, HOW being ``setsid`` (a child in a new session) or ``double-fork`` (a daemon: a child
that starts a grandchild in a new session and exits at once, so that the grandchild is
orphaned); append "ADAPTER_PID SLEEPER_PID PARENT_PID" to FILE (the parent is whatever started
the adapter: the runner's supervisor); --log-requests FILE appends each run request's case id
to FILE before handling it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

LARGE = 4 * 1024 * 1024


def reply_for(req: dict, args: argparse.Namespace) -> dict | None:
    seq = req.get("seq", 0)
    case_id = req.get("id", "")
    inp = req.get("input", {})
    if "crash" in case_id:
        sys.stderr.write("boom: the adapter crashed on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    if "hang" in case_id:
        time.sleep(3600)
    if "garbage" in case_id:
        return None
    if "wrong-seq" in case_id:
        return {"seq": seq + 100, "output": {"value": inp.get("value")}}
    if "huge" in case_id:
        return {"seq": seq, "output": {"value": "x" * (17 * 1024 * 1024)}}
    if "flood" in case_id:
        chunk = "e" * 1023 + "\n"
        for _ in range(5 * 1024):
            sys.stderr.write(chunk)
        sys.stderr.flush()
    if "error" in case_id:
        return {"seq": seq, "error": {"message": "internal failure", "traceback": "tb line"}}
    if "skip" in case_id:
        return {"seq": seq, "skipped": {"reason": "not today"}}
    if "invalid" in case_id:
        return {"seq": seq, "output": "not an object"}
    if "pyrepr" in case_id:
        return {"seq": seq, "output": repr(inp.get("value"))}
    if args.always_reject:
        return {"seq": seq, "reject": {"code": args.always_reject}}
    if "wrongval" in case_id:
        return {"seq": seq, "output": {"value": "something else"}}
    if "reject" in inp:
        return {"seq": seq, "reject": {"code": inp["reject"]}}
    return {"seq": seq, "output": {"value": inp.get("value")}}


# Ignores SIGTERM, then says so on the descriptor given as its argument, then sleeps.
SLEEPER = (
    "import os, signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "os.write(int(sys.argv[1]), b'x'); time.sleep(3600)"
)


def escape(how: str, log: str) -> None:
    """Start a sleeper that leaves the adapter's process group and ignores SIGTERM; return
    once it ignores it."""
    ready_read, ready_write = os.pipe()
    command = [sys.executable, "-c", SLEEPER, str(ready_write)]
    if how == "setsid":
        sleeper = subprocess.Popen(command, start_new_session=True, pass_fds=[ready_write]).pid
    else:
        read, write = os.pipe()
        child = os.fork()
        if child == 0:  # the daemon's first fork: a new session, a grandchild, then exit
            os.setsid()
            grandchild = os.fork()
            if grandchild == 0:
                os.set_inheritable(ready_write, True)
                os.execv(sys.executable, command)
            os.write(write, str(grandchild).encode())
            os._exit(0)
        os.close(write)
        with os.fdopen(read, "rb") as answer:
            sleeper = int(answer.read())
        os.waitpid(child, 0)
    os.close(ready_write)
    os.read(ready_read, 1)  # it ignores SIGTERM now
    os.close(ready_read)
    with Path(log).open("a") as f:
        f.write(f"{os.getpid()} {sleeper} {os.getppid()}\n")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--crash-on-start", action="store_true")
    p.add_argument("--hang-on-start", action="store_true")
    p.add_argument("--bad-handshake", action="store_true")
    p.add_argument("--always-reject")
    p.add_argument("--ops", default="echo")
    p.add_argument("--oneshot", action="store_true")
    p.add_argument("--log-starts")
    p.add_argument("--no-flush", action="store_true")
    p.add_argument("--grandchild")
    p.add_argument("--escape", nargs=2, metavar=("HOW", "FILE"))
    p.add_argument("--log-requests")
    return p.parse_args()


def main() -> int:
    args = parse_args()
    if args.escape:
        escape(*args.escape)
    if args.grandchild:
        sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        with Path(args.grandchild).open("a") as f:
            f.write(f"{os.getpid()} {sleeper.pid}\n")
    if args.log_starts:
        with Path(args.log_starts).open("a") as f:
            f.write("start\n")
    if args.crash_on_start:
        sys.stderr.write("fatal: missing configuration file adapter.toml\n")
        return 2
    out = sys.stdout
    for line in sys.stdin:
        req = json.loads(line)
        if req["cmd"] == "start":
            if args.hang_on_start:
                time.sleep(3600)
            if args.bad_handshake:
                msg: dict = {"protocol": 1, "implementation": {"name": "fake"}}
            else:
                msg = {
                    "protocol": 1,
                    "implementation": {
                        "name": "fake",
                        "version": "1.0",
                        "language": "python",
                        "operations": [o for o in args.ops.split(",") if o],
                    },
                }
        elif req["cmd"] == "stop":
            return 0
        else:
            if args.log_requests:
                with Path(args.log_requests).open("a") as f:
                    f.write(req.get("id", "") + "\n")
            if "chatty" in req.get("id", ""):
                out.write("debug: handling a request\n")
            msg = reply_for(req, args)
            if msg is None:
                out.write("this is not json\n")
                out.flush()
                if args.oneshot:
                    return 0
                continue
        text = json.dumps(msg)
        if "large" in req.get("id", ""):
            text = text[:-1] + " " * LARGE + "}"
        out.write(text + "\n")
        if not args.no_flush:
            out.flush()
        if args.oneshot:
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
