"""Switchboard bridge client (protocol switchboard-bridge/1), standard library only.

A backend started by switchboard finds the bridge socket in SWITCHBOARD_BRIDGE and its token in
SWITCHBOARD_BRIDGE_TOKEN. Through the bridge it can call any tool, resource or prompt the policy
grants it (names as hosts see them) and handler methods such as ``vault.sign``::

    from switchboard_bridge import Bridge

    with Bridge().connect() as bridge:
        result = bridge.call_tool("memory_read_graph", {})
        signed = bridge.call("vault.sign", {"key": "deploy", "data": "hello"})

Thread-safe: one reader thread matches answers to requests, so several threads may each have a
request in flight on one connection.
"""

import itertools
import json
import os
import socket
import threading

__all__ = ["Bridge", "BridgeError", "connect", "PROTOCOL", "CHAIN_META_KEY"]

PROTOCOL = "switchboard-bridge/1"
CHAIN_META_KEY = "io.switchboard/chain"
DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024
AUTHENTICATION_FAILED = -32030
METHOD_NOT_FOUND = -32601
_AUTH_ID = 1


class BridgeError(Exception):
    """An error answered by switchboard (int ``code``) or a local failure (str ``code``:
    not_configured, unavailable, closed, timeout, message_too_large, protocol)."""

    def __init__(self, code, message, data=None):
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        self.data = data


class _Lines:
    """Newline framing with a size limit: an oversized line is skipped, the ones after it kept."""

    def __init__(self, sock, limit):
        self._sock = sock
        self._buf = bytearray()
        self._skipping = False
        self.limit = limit

    def read(self):
        """Next line as bytes, or ``None`` at end of stream. Raises ``_Oversized``."""
        while True:
            nl = self._buf.find(b"\n")
            if nl != -1:
                line = bytes(self._buf[:nl])
                del self._buf[: nl + 1]
                if self._skipping or len(line) > self.limit:
                    self._skipping = False
                    raise _Oversized()
                if line.strip():
                    return line
                continue
            if len(self._buf) > self.limit:
                # Keep memory bounded: forget the start of a line we will drop anyway.
                self._buf.clear()
                self._skipping = True
            chunk = self._sock.recv(65536)
            if not chunk:
                return None
            self._buf += chunk


class _Oversized(Exception):
    pass


class _Pending:
    __slots__ = ("event", "result", "error", "on_progress")

    def __init__(self, on_progress):
        self.event = threading.Event()
        self.result = None
        self.error = None
        self.on_progress = on_progress


def _chain_of(parent):
    """The call chain of the request being served: from its _meta, its params, or the request."""
    if parent is None:
        return None
    if hasattr(parent, "model_dump"):  # a pydantic model from the MCP Python SDK
        parent = parent.model_dump(by_alias=True, exclude_none=True)
    if not isinstance(parent, dict):
        return None
    if CHAIN_META_KEY in parent:
        return parent[CHAIN_META_KEY]
    for key in ("_meta", "meta", "params"):
        if isinstance(parent.get(key), dict):
            found = _chain_of(parent[key])
            if found is not None:
                return found
    return None


class Bridge:
    """One authenticated connection to switchboard's bridge."""

    def __init__(self):
        self.identity = None
        self.max_message_bytes = DEFAULT_MAX_MESSAGE_BYTES
        #: Serves switchboard's requests to this client (sampling/createMessage, elicitation/create,
        #: roots/list): ``on_request(method, params) -> result dict``; raise BridgeError to refuse.
        #: Runs on its own thread. None answers -32601.
        self.on_request = None
        #: Called as ``on_notification(method, params)`` for notifications other than progress.
        self.on_notification = None
        self._sock = None
        self._lines = None
        self._reader = None
        self._write_lock = threading.Lock()
        self._lock = threading.Lock()
        self._pending = {}
        self._ids = itertools.count(_AUTH_ID + 1)
        self._closed = False

    # -- connection --------------------------------------------------------------------------

    def connect(self, path=None, token=None, max_message_bytes=None):
        """Connects and authenticates; returns self. Defaults come from the environment."""
        path = path or os.environ.get("SWITCHBOARD_BRIDGE")
        token = token or os.environ.get("SWITCHBOARD_BRIDGE_TOKEN")
        if not path:
            raise BridgeError(
                "not_configured", "SWITCHBOARD_BRIDGE is not set: not started by a switchboard with a bridge"
            )
        if not token:
            raise BridgeError("not_configured", "SWITCHBOARD_BRIDGE_TOKEN is not set")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(path)
        except OSError as err:
            sock.close()
            reason = err.strerror or err
            raise BridgeError("unavailable", f"cannot reach the switchboard bridge at {path}: {reason}") from err
        self._sock = sock
        self._lines = _Lines(sock, max_message_bytes or DEFAULT_MAX_MESSAGE_BYTES)
        try:
            auth = {"jsonrpc": "2.0", "id": _AUTH_ID, "method": "bridge/authenticate", "params": {"token": token}}
            self._write(auth)
            answer = self._read_auth_answer()
        except BaseException:
            sock.close()
            raise
        if "error" in answer:
            sock.close()
            err = answer["error"] or {}
            code = err.get("code", AUTHENTICATION_FAILED)
            raise BridgeError(code, err.get("message", "Authentication failed"), err.get("data"))
        result = answer.get("result") or {}
        protocol = result.get("protocol", PROTOCOL)
        if protocol != PROTOCOL:
            sock.close()
            raise BridgeError("protocol", f"the bridge speaks {protocol}, this client {PROTOCOL}")
        self.identity = result.get("identity")
        limit = result.get("maxMessageBytes")
        if isinstance(limit, int) and limit > 0:
            self.max_message_bytes = limit
            if max_message_bytes is None:
                self._lines.limit = limit
        self._reader = threading.Thread(target=self._read_loop, name="switchboard-bridge-reader", daemon=True)
        self._reader.start()
        return self

    def _read_auth_answer(self):
        while True:
            try:
                line = self._lines.read()
            except _Oversized:
                raise BridgeError("protocol", "the authentication answer exceeds the size limit") from None
            if line is None:
                raise BridgeError("closed", "the bridge closed the connection before answering")
            try:
                message = json.loads(line)
            except ValueError:
                raise BridgeError("protocol", "the authentication answer is not JSON") from None
            is_answer = isinstance(message, dict) and "method" not in message
            if is_answer and message.get("id") in (_AUTH_ID, None):
                return message

    def close(self):
        """Closes the connection; requests in flight raise BridgeError('closed')."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._sock.close()
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join()
        self._fail_all()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- requests ----------------------------------------------------------------------------

    def request(self, method, params=None, parent_meta=None, timeout=None, on_progress=None):
        """Sends a request and waits for its result (a dict).

        ``parent_meta``: the ``_meta`` of the MCP request this backend is serving (or its params,
        or the whole request); its ``io.switchboard/chain`` is copied so switchboard's loop guard
        and cancellation cascade work. ``timeout`` (seconds): on expiry the request is cancelled
        (notifications/cancelled) and BridgeError('timeout') raised. ``on_progress(params)``
        receives the request's notifications/progress.
        """
        if self._sock is None:
            raise BridgeError("closed", "not connected")
        request_id = next(self._ids)
        chain = _chain_of(parent_meta)
        if chain is not None or on_progress is not None:
            params = dict(params or {})
            meta = dict(params.get("_meta") or {})
            if chain is not None:
                meta.setdefault(CHAIN_META_KEY, chain)
            if on_progress is not None:
                meta["progressToken"] = request_id
            params["_meta"] = meta
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        pending = _Pending(on_progress)
        with self._lock:
            if self._closed:
                raise BridgeError("closed", "the bridge connection is closed")
            self._pending[request_id] = pending
        try:
            self._write(message)
        except BaseException:
            with self._lock:
                self._pending.pop(request_id, None)
            raise
        if not pending.event.wait(timeout):
            with self._lock:
                self._pending.pop(request_id, None)
            self._notify_quietly("notifications/cancelled", {"requestId": request_id, "reason": "timeout"})
            raise BridgeError("timeout", f"{method}: no answer within {timeout} s")
        if pending.error is not None:
            raise pending.error
        return pending.result

    def notify(self, method, params=None):
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._write(message)

    def call_tool(self, name, arguments=None, parent_meta=None, timeout=None, on_progress=None):
        """Calls a tool as hosts see it in the catalog; a tool error is a result (isError), not a raise."""
        params = {"name": name, "arguments": arguments or {}}
        return self.request("tools/call", params, parent_meta, timeout, on_progress)

    def list_tools(self, timeout=None):
        """Every tool this backend may call (all pages)."""
        tools, cursor = [], None
        while True:
            page = self.request("tools/list", {"cursor": cursor} if cursor else None, timeout=timeout)
            tools.extend(page.get("tools", []))
            cursor = page.get("nextCursor")
            if not cursor:
                return tools

    def call(self, method, params=None, parent_meta=None, timeout=None):
        """Calls a handler method served inside switchboard, e.g. ``call("vault.sign", {...})``."""
        return self.request(method, params, parent_meta, timeout)

    # -- internals ---------------------------------------------------------------------------

    def _write(self, message):
        data = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        if len(data) > self.max_message_bytes:
            # The server would drop it and answer with id null, which no caller could match.
            raise BridgeError(
                "message_too_large",
                f"message of {len(data)} bytes exceeds the bridge limit of {self.max_message_bytes}",
            )
        with self._write_lock:  # sendall blocks while the socket is full: that is the backpressure
            try:
                self._sock.sendall(data + b"\n")
            except OSError as err:
                raise BridgeError("closed", f"the bridge connection is closed: {err}") from err

    def _notify_quietly(self, method, params):
        try:
            self.notify(method, params)
        except BridgeError:
            pass

    def _read_loop(self):
        try:
            while True:
                try:
                    line = self._lines.read()
                except _Oversized:
                    continue  # whoever waited for it times out or is cancelled; nothing else to do
                if line is None:
                    break
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if isinstance(message, dict):
                    self._dispatch(message)
        except OSError:
            pass
        finally:
            with self._lock:
                self._closed = True
            self._fail_all()

    def _dispatch(self, message):
        method = message.get("method")
        if method is None:
            with self._lock:
                pending = self._pending.pop(message.get("id"), None)
            if pending is None:
                return  # an answer to a request we cancelled or timed out
            if "error" in message:
                err = message["error"] or {}
                pending.error = BridgeError(err.get("code"), err.get("message", ""), err.get("data"))
            else:
                pending.result = message.get("result")
            pending.event.set()
        elif "id" in message:
            threading.Thread(target=self._serve, args=(message,), daemon=True).start()
        elif method == "notifications/progress":
            params = message.get("params") or {}
            with self._lock:
                pending = self._pending.get(params.get("progressToken"))
            if pending is not None and pending.on_progress is not None:
                self._run_callback(pending.on_progress, params)
        elif self.on_notification is not None:
            self._run_callback(self.on_notification, method, message.get("params"))

    @staticmethod
    def _run_callback(callback, *args):
        # A failing callback must not stop the reader thread: every request would hang with it.
        try:
            callback(*args)
        except Exception:  # noqa: BLE001
            pass

    def _serve(self, message):
        try:
            if self.on_request is None:
                raise BridgeError(METHOD_NOT_FOUND, f"Method not found: {message['method']}")
            result = self.on_request(message["method"], message.get("params"))
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        except BridgeError as err:
            code = err.code if isinstance(err.code, int) else -32603
            error = {"code": code, "message": err.message}
            if err.data is not None:
                error["data"] = err.data
            reply = {"jsonrpc": "2.0", "id": message["id"], "error": error}
        except Exception as err:  # noqa: BLE001 - the server must get an answer whatever went wrong
            reply = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32603, "message": str(err)}}
        try:
            self._write(reply)
        except BridgeError:
            pass

    def _fail_all(self):
        with self._lock:
            pending, self._pending = list(self._pending.values()), {}
        for p in pending:
            p.error = BridgeError("closed", "the bridge connection closed")
            p.event.set()


def connect(path=None, token=None):
    """Shorthand for ``Bridge().connect(path, token)``."""
    return Bridge().connect(path, token)
