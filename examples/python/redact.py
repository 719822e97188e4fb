#!/usr/bin/env python3
"""after_tool: mask secrets in what the tool returned before the model sees it.

Only the fields that changed are patched (`for_llm`, `for_user`), so other
hooks' rewrites of the result survive; clean output continues untouched.
"""

import re

from hookhost_sdk import App, Decision, ToolOutput, modify_result

MASK = "[REDACTED]"
# `\g<1>` keeps the word Bearer, a URL's scheme or an AWS key's name. The URL
# pattern is bounded (a scheme starts a word and has at most 32 characters,
# user and password at most 256 each): Python's regex engine backtracks, and
# an unbounded scheme took 54 s on 200 KiB of letters, which a tool's output
# (so the model) controls. A private
# key cut off before its END line is masked to the end. Lowercase `bearer`
# needs a digit in its token, so that "the bearer of this letter" is left alone.
PATTERNS = [  # applied in this order
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.DOTALL), MASK),
    (re.compile(r"(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]{0,31}://)[^\s/@:]{1,256}:[^\s/@]{1,256}@"), r"\g<1>" + MASK + "@"),
    (re.compile(r"(Bearer\s+)[A-Za-z0-9._~+/=-]+"), r"\g<1>" + MASK),
    (re.compile(r"((?i:bearer)\s+)[A-Za-z0-9._~+/=-]*[0-9][A-Za-z0-9._~+/=-]*"), r"\g<1>" + MASK),
    (re.compile(r"eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+"), MASK),
    (re.compile(r"sk-[A-Za-z0-9_-]{16,}"), MASK),
    (re.compile(r"[sr]k_(?:live|test)_[A-Za-z0-9]{10,}"), MASK),
    (re.compile(r"AKIA[0-9A-Z]{16}"), MASK),
    (
        re.compile(r"""((?i:(?:aws[_-]?)?secret[_-]?access[_-]?key)["']?\s*[:=]\s*["']?)[A-Za-z0-9/+]{40,}"""),
        r"\g<1>" + MASK,
    ),
    (re.compile(r"gh[pousr]_[A-Za-z0-9]{36,}"), MASK),
    (re.compile(r"github_pat_[A-Za-z0-9_]{20,}"), MASK),
    (re.compile(r"xox[abprs]-[A-Za-z0-9-]{10,}"), MASK),
    (re.compile(r"AIza[0-9A-Za-z_-]{35}"), MASK),
]


def redact(text: str) -> str:
    for pattern, replacement in PATTERNS:
        text = pattern.sub(replacement, text)
    return text


app = App("redact")


@app.after_tool
def mask_secrets(output: ToolOutput) -> Decision | None:
    changed = {}
    for field in ("for_llm", "for_user"):
        text = output.result.get(field)
        if isinstance(text, str) and (masked := redact(text)) != text:
            changed[field] = masked
    return modify_result(**changed) if changed else None


if __name__ == "__main__":
    app.run()
