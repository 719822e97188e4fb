"""The spec's shared test vectors (spec/vectors), run against the SDK.

What is meaningful for a hook-side SDK, and so what runs here:

- envelope.json: all of it. The SDK classifies every line it reads, and the
  classifier is complete (it also recognises responses, which a hook never
  receives in version 1, so that the whole file applies).
- methods/*.json, params: all of them. The SDK checks params before a
  handler sees them (invalid params get -32602), so valid ones must pass and
  invalid ones must be rejected.
- methods/*.json, results: all of them. hook.lifecycle result cases may
  name the ``event`` they answer (what a lifecycle answer may say depends on
  it); the legality check then runs too. The SDK checks what a handler
  returns as a plain dict before sending it, with the host's rules, so a bad
  answer fails in the hook with a clear message; the decision it computes
  must equal the vector's. Hello results are decoded the same way, and the
  SDK's own hello answer is checked against that decoder.
- merge_patch.json: all of it, for ``hookhost_sdk.merge_patch.apply``, and
  ``diff`` is checked to produce a patch that leads to the same result.
- chain.json: not run. Folding many hooks' answers into one verdict is the
  host's job (protocol/src/chain.rs); a hook never sees the chain.

Error texts: the SDK words its errors like the reference implementation, so
every ``error_contains`` is checked as a substring, except where noted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hookhost_sdk import App, merge_patch
from hookhost_sdk.schema import ProtocolError, check_params, decode_hello_result, decode_result
from hookhost_sdk.wire import _loads, classify

VECTORS = Path(__file__).resolve().parents[2] / "spec" / "vectors"
KNOWN_METHODS = {
    "hook.hello",
    "hook.before_llm",
    "hook.after_llm",
    "hook.before_tool",
    "hook.after_tool",
    "hook.approve_tool",
    "hook.runtime_event",
    "hook.lifecycle",
    "$/cancel_request",
}


def load(name: str) -> Any:
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))


def strict_keys(case: dict[str, Any], allowed: set[str], where: str) -> None:
    """A typo in a vector must not quietly turn a check off."""
    unknown = set(case) - allowed
    assert not unknown, f"{where}: unknown members {unknown} in case {case.get('name')!r}"


def same_json(a: Any, b: Any) -> bool:
    """Structural JSON equality where 1 and 1.0 (and true and 1) differ."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


# --- envelope -------------------------------------------------------------------

ENVELOPE = load("envelope.json")


@pytest.mark.parametrize("case", ENVELOPE, ids=[c["name"] for c in ENVELOPE])
def test_envelope(case: dict[str, Any]) -> None:
    strict_keys(case, {"name", "line", "expect", "id", "method", "error_code"}, "envelope.json")
    msg = classify(case["line"].encode("utf-8"))
    assert msg.kind == case["expect"], msg.problem
    assert same_json(msg.id, case.get("id")), (msg.id, case.get("id"))
    if case["expect"] in ("request", "notification"):
        assert msg.method == case["method"]
        assert isinstance(msg.params, dict)
    if case["expect"] == "response":
        assert msg.error_code == case.get("error_code")


# The SDK parses a line starting with `{` with json's C scanner directly; for
# everything, values and errors must be json.loads's own.
PARSE_EDGES = [
    b'{"a":1}',
    b'{"a":1}\r',
    b'{"a":1} \t',
    b' {"a":1}',
    b'\xef\xbb\xbf{"a":1}',
    b'{"a":1} x',
    b'{"a":1} {"b":2}',
    b'{"a":"\xed\xa0\x80"}',
    b'{"a":"\xff"}',
    b'{"a":"\x01"}',
    b'{"a":NaN,"b":-Infinity}',
    b'{"a":1e400}',
    b'{"a":1',
    b"{\x00",
    b"[1]",
    b"",
    '{"s":"\u00e9"}',
]


@pytest.mark.parametrize("line", PARSE_EDGES, ids=[repr(x) for x in PARSE_EDGES])
def test_fast_parse_is_json_loads(line: bytes | str) -> None:
    def outcome(parse: Any) -> str:
        try:
            return repr(parse(line))
        except ValueError as exc:
            return f"{type(exc).__name__}: {exc}"

    assert outcome(_loads) == outcome(json.loads)


# --- methods --------------------------------------------------------------------

METHOD_FILES = sorted((VECTORS / "methods").glob("*.json"))


def test_method_files_exist_and_are_known() -> None:
    assert METHOD_FILES, "spec/vectors/methods is empty"
    for path in METHOD_FILES:
        data = json.loads(path.read_text(encoding="utf-8"))
        strict_keys(data, {"method", "params", "results"}, path.name)
        assert data["method"] in KNOWN_METHODS, f"{path.name} names a method the SDK does not know"
        assert path.name == data["method"].removeprefix("$/") + ".json"


def method_cases(section: str, kind: str) -> list[Any]:
    out = []
    for path in METHOD_FILES:
        data = json.loads(path.read_text(encoding="utf-8"))
        block = data[section]
        if block is None:
            continue
        assert block[kind], f"{path.name}: {section}.{kind} is empty"
        out += [pytest.param(data["method"], case, id=f"{path.stem}: {case['name']}") for case in block[kind]]
    return out


@pytest.mark.parametrize(("method", "case"), method_cases("params", "valid"))
def test_params_valid(method: str, case: dict[str, Any]) -> None:
    strict_keys(case, {"name", "value"}, method)
    check_params(method, case["value"])


@pytest.mark.parametrize(("method", "case"), method_cases("params", "invalid"))
def test_params_invalid(method: str, case: dict[str, Any]) -> None:
    strict_keys(case, {"name", "value", "error_contains"}, method)
    with pytest.raises(ProtocolError) as err:
        check_params(method, case["value"])
    assert case["error_contains"] in str(err.value)


def decode(method: str, case: dict[str, Any]) -> dict[str, Any]:
    if method == "hook.hello":
        return decode_hello_result(case["value"])
    return decode_result(method.removeprefix("hook."), case["value"], case.get("event"))


def result_keys(method: str, base: set[str]) -> set[str]:
    """Lifecycle result cases may also name their event."""
    return base | {"event"} if method == "hook.lifecycle" else base


@pytest.mark.parametrize(("method", "case"), method_cases("results", "valid"))
def test_results_valid(method: str, case: dict[str, Any]) -> None:
    strict_keys(case, result_keys(method, {"name", "value", "decision"}), method)
    assert same_json(decode(method, case), case["decision"])


@pytest.mark.parametrize(("method", "case"), method_cases("results", "invalid"))
def test_results_invalid(method: str, case: dict[str, Any]) -> None:
    strict_keys(case, result_keys(method, {"name", "value", "error_contains"}), method)
    with pytest.raises(ProtocolError) as err:
        decode(method, case)
    assert case["error_contains"] in str(err.value)


def test_lifecycle_vectors_exist_once_the_spec_has_the_method() -> None:
    """Discovery picks hook.lifecycle.json up by itself; this makes sure it is not missing."""
    spec = (VECTORS.parent / "protocol.md").read_text(encoding="utf-8")
    path = VECTORS / "methods" / "hook.lifecycle.json"
    if "hook.lifecycle" not in spec and not path.exists():
        pytest.skip("the spec does not define hook.lifecycle yet")
    assert path in METHOD_FILES, "spec/protocol.md defines hook.lifecycle but its method vectors are missing"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["params"]["valid"] and data["results"]["valid"] and data["results"]["invalid"]


def test_the_sdk_hello_answer_decodes_as_a_declaration() -> None:
    app = App("probe")
    app.before_tool(lambda call: None)
    app.approve_tool(lambda call: None)
    app.on_event("agent.tool.*", "agent.turn.start")(lambda event: None)
    app.lifecycle("session_start")(lambda event: None)
    assert decode_hello_result(app.hello_result()) == {
        "version": 1,
        "intercept": ["before_tool", "approve_tool", "lifecycle"],
        "observe": ["agent.tool.*", "agent.turn.start"],
    }


# --- merge patch ----------------------------------------------------------------

MERGE = load("merge_patch.json")


@pytest.mark.parametrize("case", MERGE, ids=[c["name"] for c in MERGE])
def test_merge_patch_apply(case: dict[str, Any]) -> None:
    strict_keys(case, {"name", "target", "patch", "expected"}, "merge_patch.json")
    before = json.dumps(case["target"])
    assert same_json(merge_patch.apply(case["target"], case["patch"]), case["expected"])
    assert json.dumps(case["target"]) == before, "apply() must not change its target"


@pytest.mark.parametrize("case", MERGE, ids=[c["name"] for c in MERGE])
def test_merge_patch_diff_round_trips(case: dict[str, Any]) -> None:
    target, expected = case["target"], case["expected"]
    if not (isinstance(target, dict) and isinstance(expected, dict)):
        pytest.skip("diff() works on objects, as hook params are")
    patch = merge_patch.diff(target, expected)
    assert same_json(merge_patch.apply(target, patch), expected)
