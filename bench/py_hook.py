"""The Python SDK hook of the comparison: answers `continue` at before_tool."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sdk-python", "src"))

from hookhost_sdk import App, ToolCall  # noqa: E402

app = App("bench_py")


@app.before_tool
def check(call: ToolCall) -> None:
    return None


if __name__ == "__main__":
    app.run()
