"""A loopback HTTP proxy in front of the real server that misbehaves on purpose, one request at a time:
a canned answer instead (429 with Retry-After, 503, quota_exceeded), forward and drop the answer, or hang."""

from __future__ import annotations

import http.client
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit


class LoopbackProxy:
    def __init__(self, port: int, target: str) -> None:
        self.seen: list[dict[str, Any]] = []
        self._actions: list[Any] = []
        upstream = urlsplit(target)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                proxy.seen.append({"method": self.command, "path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}})
                action = proxy._actions.pop(0) if proxy._actions else "pass"
                if action == "hang":
                    threading.Event().wait(5)
                    self.close_connection = True
                    return
                if isinstance(action, dict):
                    payload = json.dumps(action.get("body", {})).encode()
                    self.send_response(action["status"])
                    self.send_header("content-type", "application/json")
                    self.send_header("x-request-id", "req_loopback_proxy")
                    for name, value in action.get("headers", {}).items():
                        self.send_header(name, value)
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                connection = http.client.HTTPConnection(upstream.hostname or "127.0.0.1", upstream.port, timeout=60)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                connection.request(self.command, self.path, body=body or None, headers=headers)
                answer = connection.getresponse()
                data = answer.read()
                connection.close()
                if action == "drop-response":
                    # The server did the work; the client never hears of it.
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                self.send_response(answer.status)
                for name, value in answer.getheaders():
                    if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(name, value)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        # Port 0: the one the system chose.
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def script(self, *actions: Any) -> None:
        self.seen.clear()
        self._actions = list(actions)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
