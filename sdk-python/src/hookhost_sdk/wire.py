"""JSON-RPC 2.0 framing: classify one incoming line, encode one outgoing line.

Kept free of I/O so that it can be tested line by line against the spec's
``envelope.json`` vectors, and kept small because it runs once per message.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import encode_basestring_ascii
from typing import Any, Literal

__all__ = [
    "Id",
    "Message",
    "classify",
    "encode_result",
    "encode_error",
    "PARSE_ERROR",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "INVALID_PARAMS",
    "INTERNAL_ERROR",
    "REQUEST_CANCELLED",
]

#: A request id: an integer in the signed 64-bit range, or a string.
Id = int | str

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800

_I64_MIN = -(2**63)
_I64_MAX = 2**63 - 1

Kind = Literal["request", "notification", "response", "parse_error", "invalid"]


class Message:
    """One classified line.

    ``id`` is the message's id when it could be read (so that an invalid
    request can still be answered with its own id), else ``None``.
    """

    __slots__ = ("kind", "id", "method", "params", "error_code", "problem")

    def __init__(
        self,
        kind: Kind,
        id: Id | None = None,
        method: str | None = None,
        params: dict[str, Any] | None = None,
        error_code: int | None = None,
        problem: str = "",
    ) -> None:
        self.kind = kind
        self.id = id
        self.method = method
        self.params = params
        self.error_code = error_code
        self.problem = problem


def _valid_id(value: Any) -> bool:
    if isinstance(value, str):
        return True
    return type(value) is int and _I64_MIN <= value <= _I64_MAX


# The C scanner behind json.loads, with the same settings (typeshed omits it).
_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_JSON_SPACE = " \t\n\r"


def _loads(line: bytes | str) -> Any:
    """``json.loads(line)``, minus its Python wrappers for the usual line.

    json.loads spends about 1 us of a 2.5 us parse detecting the encoding and
    in two layers of Python around the C scanner. A line that starts with
    ``{`` is UTF-8 text (what json.loads decodes it as too), so it goes to
    the scanner directly; anything else, and any failure, takes json.loads
    itself, so results and errors are exactly its own.
    """
    try:
        text = line.decode("utf-8", "surrogatepass") if isinstance(line, bytes) else line
        if text.startswith("{"):
            value, end = _scan(text, 0)
            if end == len(text) or not text[end:].strip(_JSON_SPACE):
                return value
    except (StopIteration, ValueError):
        pass  # json.loads says what is wrong, in its own words
    return json.loads(line)


def classify(line: bytes | str) -> Message:
    """Classify one line (without its newline) as the spec's section 3 does."""
    try:
        msg = _loads(line)
    except ValueError as exc:  # includes invalid UTF-8
        return Message("parse_error", problem=f"not JSON: {exc}")
    if type(msg) is not dict:
        return Message("invalid", problem="a message must be a JSON object")
    has_id = "id" in msg
    raw_id = msg.get("id")
    msg_id = raw_id if has_id and _valid_id(raw_id) else None
    if msg.get("jsonrpc") != "2.0":
        return Message("invalid", msg_id, problem='`jsonrpc` must be "2.0"')
    if "method" in msg:
        method = msg["method"]
        if type(method) is not str:
            return Message("invalid", msg_id, problem="`method` must be a string")
        if "result" in msg or "error" in msg:
            return Message("invalid", msg_id, problem="a request cannot carry `result` or `error`")
        params = msg.get("params", _ABSENT)
        if params is _ABSENT:
            params = {}
        elif type(params) is not dict:
            return Message("invalid", msg_id, problem="`params` must be an object")
        if not has_id:
            return Message("notification", None, method, params)
        if msg_id is None:
            return Message("invalid", problem="a request id must be an integer or a string")
        return Message("request", msg_id, method, params)
    has_result = "result" in msg
    has_error = "error" in msg
    if has_result and has_error:
        return Message("invalid", msg_id, problem="a response has `result` or `error`, not both")
    if not (has_result or has_error):
        return Message("invalid", msg_id, problem="neither `method` nor `result`/`error`")
    if not has_id or (raw_id is not None and msg_id is None):
        return Message("invalid", problem="a response needs an integer or string id")
    if has_error:
        error = msg["error"]
        if (
            type(error) is not dict
            or type(error.get("code")) is not int
            or type(error.get("message")) is not str
        ):
            return Message("invalid", msg_id, problem="malformed `error` object")
        return Message("response", msg_id, error_code=error["code"])
    if raw_id is None:
        return Message("invalid", problem="only an error response may have a null id")
    return Message("response", msg_id)


_ABSENT: Any = object()

# ensure_ascii keeps every line valid UTF-8 even if a handler returns a lone
# surrogate; allow_nan=False refuses NaN/Infinity, which are not JSON.
_encode = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode

# Every answer encodes an id, and most answers are "continue": both skip the
# encoder's per-call set-up (about 1 us each, a fifth of a call's cost).
_CONTINUE = {"action": "continue"}
_CONTINUE_JSON = _encode(_CONTINUE)


def _encode_id(msg_id: Id | None) -> str:
    if type(msg_id) is int:
        return str(msg_id)
    if isinstance(msg_id, str):
        return encode_basestring_ascii(msg_id)
    return _encode(msg_id)


def encode_result(msg_id: Id, result: Any) -> bytes:
    """One response line, newline included. Raises on values JSON cannot hold."""
    body = _CONTINUE_JSON if result == _CONTINUE else _encode(result)
    return f'{{"jsonrpc":"2.0","id":{_encode_id(msg_id)},"result":{body}}}\n'.encode()


def encode_error(msg_id: Id | None, code: int, message: str) -> bytes:
    """One error response line, newline included."""
    error = _encode({"code": code, "message": message})
    return f'{{"jsonrpc":"2.0","id":{_encode_id(msg_id)},"error":{error}}}\n'.encode()
