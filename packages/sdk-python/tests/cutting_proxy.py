"""A loopback TCP proxy in front of the real server that cuts the client's connection after a number of bytes of an
answer's body, for the requests that match a rule (the twin of packages/sdk/test/support/cutting-proxy.ts).

It forwards bytes as they come (a stream stays a stream) and reads request heads only to know which answer is whose
(HTTP/1.1 without pipelining: the bytes from the server after a request's head are that request's answer). A cut
closes the client's side only and keeps reading the server's answer to its end, as a network that drops between
client and server would: the server never hears of it; unless the rule says ``close_server_side``, when the server's
connection closes too (the server sees its client go).
"""

from __future__ import annotations

import re
import socket
import threading
from dataclasses import dataclass, field
from urllib.parse import urlsplit

HEAD_END = b"\r\n\r\n"


@dataclass
class CutRule:
    #: Matched against the request line, e.g. ``POST /v1/inference HTTP/1.1``.
    match: re.Pattern[str]
    #: Bytes of the response body (as sent: chunked framing included) the client receives before the cut.
    after_bytes: int
    #: How many matching answers to cut; default every one.
    times: float = float("inf")
    #: Close the server's connection too at the cut (default: keep reading its answer, the server never knows).
    close_server_side: bool = False


@dataclass
class SeenRequest:
    #: ``METHOD /path?query``.
    line: str
    #: Header names in lower case.
    headers: dict[str, str]
    #: Bytes of the response body the server sent (counted to the end, cut or not).
    body_bytes: int = 0
    #: Whether the client's connection was cut during this answer.
    cut: bool = False


@dataclass
class _Answer:
    request: SeenRequest
    cut_after: int | None
    close_server_side: bool = False
    head: bytes | None = b""
    forwarded: int = 0


@dataclass
class _Rule:
    rule: CutRule
    left: float


class CuttingProxy:
    def __init__(self, target: str) -> None:
        upstream = urlsplit(target)
        self._target = (upstream.hostname or "127.0.0.1", upstream.port or 80)
        self.seen: list[SeenRequest] = []
        self._rules: list[_Rule] = []
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self, *rules: CutRule) -> None:
        """Replaces the rules (and forgets what was seen)."""
        with self._lock:
            self._rules = [_Rule(rule, rule.times) for rule in rules]
            self.seen.clear()

    def requests(self, pattern: re.Pattern[str]) -> list[SeenRequest]:
        with self._lock:
            return [r for r in self.seen if pattern.search(r.line + " ")]

    def close(self) -> None:
        self._listener.close()
        for sock in list(self._sockets):
            _close(sock)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            _Connection(self, client)

    def _arm(self, line: str, headers: dict[str, str]) -> _Answer:
        with self._lock:
            request = SeenRequest(line=re.sub(r" HTTP/1\.[01]$", "", line), headers=headers)
            self.seen.append(request)
            armed = next((r for r in self._rules if r.left > 0 and r.rule.match.search(line)), None)
            if armed is not None:
                armed.left -= 1
            if armed is None:
                return _Answer(request, None)
            return _Answer(request, armed.rule.after_bytes, armed.rule.close_server_side)


class _Connection:
    def __init__(self, proxy: CuttingProxy, client: socket.socket) -> None:
        self.proxy = proxy
        self.client = client
        self.upstream = socket.create_connection(proxy._target)
        proxy._sockets.update((client, self.upstream))
        self.client_open = True
        self.current: _Answer | None = None
        threading.Thread(target=self._from_client, daemon=True).start()
        threading.Thread(target=self._from_upstream, daemon=True).start()

    def _from_client(self) -> None:
        head = b""
        body_left = 0
        try:
            while chunk := self.client.recv(65536):
                rest = chunk
                while rest:
                    if body_left:
                        taken = min(body_left, len(rest))
                        body_left -= taken
                        rest = rest[taken:]
                        continue
                    head += rest
                    end = head.find(HEAD_END)
                    if end < 0:
                        break
                    line, *fields = head[:end].decode("latin-1").split("\r\n")
                    rest, head = head[end + 4 :], b""
                    headers = {}
                    for item in fields:
                        name, _, value = item.partition(":")
                        headers[name.strip().lower()] = value.strip()
                    body_left = int(headers.get("content-length") or 0)
                    # Known before the request goes on, so the answer's first bytes are counted as its own.
                    self.current = self.proxy._arm(line, headers)
                self.upstream.sendall(chunk)
        except OSError:
            pass
        if self.client_open:
            _close(self.upstream)

    def _from_upstream(self) -> None:
        try:
            while chunk := self.upstream.recv(65536):
                self._answer(chunk)
        except OSError:
            pass
        if self.client_open:
            self.client_open = False
            _close(self.client)
        _close(self.upstream)

    def _answer(self, chunk: bytes) -> None:
        answer = self.current
        body, head_part = chunk, b""
        if answer is not None and answer.head is not None:
            head = answer.head + chunk
            end = head.find(HEAD_END)
            if end < 0:
                answer.head, body, head_part = head, b"", chunk
            else:
                body = head[end + 4 :]
                answer.head, head_part = None, chunk[: len(chunk) - len(body)]
        if answer is not None:
            answer.request.body_bytes += len(body)
        if not self.client_open:
            return
        if answer is None or answer.cut_after is None or answer.head is not None:
            self.client.sendall(chunk)
            return
        room = answer.cut_after - answer.forwarded
        if len(body) < room:
            self.client.sendall(chunk)
            answer.forwarded += len(body)
            return
        # The cut: the head and the allowed bytes, then the client's connection closes; the server's answer is still read.
        self.client_open = False
        answer.request.cut = True
        self.client.sendall(head_part + body[:room])
        _close(self.client)
        if answer.close_server_side:
            _close(self.upstream)


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
