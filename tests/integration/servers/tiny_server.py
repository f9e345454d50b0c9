"""A hand-written stdio MCP server for the edge cases the SDK will not produce.

Options:
  --noise             write non-JSON lines (text, bad UTF-8, deep nesting) before every answer
  --server-requests   after ``initialized``, send a ``ping`` with id 0 and an
                      ``elicitation/create`` with id 1; tool ``answers`` returns
                      what the client answered
  --protocol V        answer ``initialize`` with protocol revision V
  --once FILE         refuse to start (exit 1) if FILE exists; create it
  --stubborn          ignore SIGTERM and stdin EOF (only SIGKILL ends it)
  --pid-file FILE     write the process id to FILE
  --silent-discover   never answer ``server/discover`` (as some handshake-era
                      servers ignore requests before ``initialize``)
  --visit-notifies    after ``visit``'s elicitation, send a log notification
                      (``notifications/message``) while the client answers

Tools: ``echo`` (text), ``hang`` (never answers), ``visit`` (asks the client
to visit a page: URL-mode elicitation; returns the client's answer as JSON).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--noise", action="store_true")
    parser.add_argument("--server-requests", action="store_true")
    parser.add_argument("--protocol", default=None)
    parser.add_argument("--once", default=None)
    parser.add_argument("--stubborn", action="store_true")
    parser.add_argument("--pid-file", default=None)
    parser.add_argument("--silent-discover", action="store_true")
    parser.add_argument("--visit-notifies", action="store_true")
    args = parser.parse_args()
    if args.once:
        if os.path.exists(args.once):
            sys.exit(1)
        open(args.once, "w").close()
    if args.pid_file:
        with open(args.pid_file, "w") as f:
            f.write(str(os.getpid()))
    if args.stubborn:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)

    answers: dict[str, object] = {}
    deferred: list[object] = []  # ids of ``answers`` calls waiting for both answers
    visits: dict[str, object] = {}  # our elicitation's id -> the ``visit`` call waiting for it

    def write(frame: dict[str, object]) -> None:
        if args.noise:  # text, invalid UTF-8, and JSON nested past the parser's depth
            sys.stdout.write("this is not JSON\n")
            sys.stdout.flush()
            sys.stdout.buffer.write(b"\xff\xfe{\n" + b"[" * 100_000 + b"\n")
        sys.stdout.write(json.dumps(frame) + "\n")
        sys.stdout.flush()

    for line in sys.stdin:
        msg = json.loads(line)
        method = msg.get("method")
        if args.silent_discover and method == "server/discover":
            continue
        if method is None and str(msg.get("id")) in visits:
            content = [{"type": "text", "text": json.dumps(msg.get("result", msg.get("error")))}]
            call_id = visits.pop(str(msg["id"]))
            write({"jsonrpc": "2.0", "id": call_id, "result": {"content": content}})
            continue
        if method is None:  # an answer to one of our requests
            answers[str(msg.get("id"))] = msg.get("result", msg.get("error"))
            if len(answers) == 2:
                for request_id in deferred:
                    content = [{"type": "text", "text": json.dumps(answers)}]
                    write({"jsonrpc": "2.0", "id": request_id, "result": {"content": content}})
                deferred.clear()
            continue
        if method == "initialize":
            version = args.protocol or msg["params"]["protocolVersion"]
            result = {
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "tiny", "version": "0"},
                "clientInfo": msg["params"]["clientInfo"],
            }
            write({"jsonrpc": "2.0", "id": msg["id"], "result": result})
        elif method == "notifications/initialized" and args.server_requests:
            write({"jsonrpc": "2.0", "id": 0, "method": "ping"})
            write(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "elicitation/create",
                    "params": {"message": "name?", "requestedSchema": {"type": "object"}},
                }
            )
        elif method == "tools/list":
            tools = [
                {"name": "echo", "inputSchema": {"type": "object"}},
                {"name": "hang", "inputSchema": {"type": "object"}},
                {"name": "answers", "inputSchema": {"type": "object"}},
                {"name": "visit", "inputSchema": {"type": "object"}},
            ]
            write({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": tools}})
        elif method == "tools/call":
            name = msg["params"]["name"]
            if name == "visit":
                visits[ask := f"visit-{msg['id']}"] = msg["id"]
                params = {
                    "mode": "url",
                    "message": "Sign in to the example service.",
                    "url": "https://example.com/sign-in?session=42",
                    "elicitationId": ask,
                }
                request = {"jsonrpc": "2.0", "id": ask, "method": "elicitation/create"}
                write({**request, "params": params})
                if args.visit_notifies:
                    note = {"level": "info", "data": "waiting for the visit"}
                    write({"jsonrpc": "2.0", "method": "notifications/message", "params": note})
                continue
            if name == "hang" or (name == "answers" and len(answers) < 2):
                if name == "answers":
                    deferred.append(msg["id"])
                continue
            text = json.dumps(answers) if name == "answers" else msg["params"]["arguments"]["text"]
            result = {"content": [{"type": "text", "text": text}]}
            write({"jsonrpc": "2.0", "id": msg["id"], "result": result})
        elif "id" in msg:
            error = {"code": -32601, "message": "no"}
            write({"jsonrpc": "2.0", "id": msg["id"], "error": error})
    if args.stubborn:
        threading.Event().wait()


if __name__ == "__main__":
    main()
