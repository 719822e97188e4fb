// The Node SDK hook of the comparison (row 19): answers `continue` at
// before_tool, as bench/py_hook.py does with the Python SDK. Imported from
// the repository's sdk-node, as py_hook.py imports sdk-python/src.
import { Hook } from "../sdk-node/src/index.js";

new Hook("bench_node").beforeTool(() => undefined).run();
