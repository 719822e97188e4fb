"""What the network server (:mod:`.netserve`) and the sidecar client (:mod:`.host`) share.

Small on purpose: the WebSocket handshake key, masking, and the shared
token, read and checked the same way on both sides.
"""

from __future__ import annotations

import base64
import hashlib

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
CONT, TEXT, BINARY, CLOSE, PING, PONG = 0, 1, 2, 8, 9, 10


def accept_key(key: str) -> str:
    """The ``Sec-WebSocket-Accept`` answer to ``Sec-WebSocket-Key: key`` (RFC 6455 section 4.2.2)."""
    return base64.b64encode(hashlib.sha1(key.encode() + GUID).digest()).decode()


def xor_mask(data: bytes, mask: bytes) -> bytes:
    """``data`` masked (or unmasked) with the 4-byte ``mask``."""
    # XOR as one big integer: done in C, so a 64 MiB frame costs milliseconds,
    # where a Python loop over its bytes would take seconds.
    n = len(data)
    if n == 0:
        return data
    key = int.from_bytes((mask * (n // 4 + 1))[:n], "big")
    return (int.from_bytes(data, "big") ^ key).to_bytes(n, "big")


def check_token(token: str) -> str:
    """``token`` without surrounding whitespace; ValueError when that is empty or not printable ASCII."""
    token = token.strip()
    if not token:
        raise ValueError("the token is empty")
    if not all("!" <= c <= "~" for c in token):
        raise ValueError("the token must be printable ASCII without spaces (it travels in an HTTP header)")
    return token


def read_token_file(path: str) -> str:
    """The token in the file at ``path``, trimmed; ValueError (with the path) when it cannot be used."""
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"--token-file {path}: cannot read it: {exc}") from None
    if not text.strip():
        raise ValueError(f"--token-file {path}: the file is empty; put the token in it")
    try:
        return check_token(text)
    except ValueError as exc:
        raise ValueError(f"--token-file {path}: {exc}") from None
