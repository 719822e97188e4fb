"""What the example tests share: the hookhost binary they drive."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def hookhost_bin() -> str:
    """``$HOOKHOST_BIN``, else the debug build; a clear failure when neither exists."""
    configured = os.environ.get("HOOKHOST_BIN")
    if configured:
        return configured
    built = REPO / "target" / "debug" / "hookhost"
    if not built.exists():
        pytest.fail(f"no hookhost binary at {built}: run `cargo build -p hookhost-cli` (or set HOOKHOST_BIN)")
    return str(built)
