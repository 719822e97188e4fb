"""A deliberately bad host of protocol v1, for cli/tests/probe.rs.

Spawns the hook given on the command line (`hookhost probe ...`) and
breaks four rules, each on its own line or moment:

  line 1  the hello has id 0                      (ids)
  line 2  a stage call before the hello answer    (nothing_before_hello_answer)
  line 3  a request with a string id              (ids)
  end     SIGTERM while stdin is still open       (eof_before_term)

Prints one JSON object on stdout: the hook's exit status and the ids of
the answers it read, in order. Standard library only.
"""

import json
import signal
import subprocess
import sys


def line(obj):
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode()


def main():
    signal.alarm(20)  # never hang the test run
    hook = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    hello = {"name": "probe", "version": 1, "host": {"name": "bad-host", "version": "0"}}
    call = {"tool": "shell", "arguments": {"command": "ls"}}
    after = {"tool": "shell", "arguments": {}, "result": {"for_llm": "ok"}}
    hook.stdin.write(line({"jsonrpc": "2.0", "id": 0, "method": "hook.hello", "params": hello}))
    hook.stdin.write(line({"jsonrpc": "2.0", "id": 1, "method": "hook.before_tool", "params": call}))
    hook.stdin.flush()
    answers = [json.loads(hook.stdout.readline()) for _ in range(2)]
    hook.stdin.write(line({"jsonrpc": "2.0", "id": "s-2", "method": "hook.after_tool", "params": after}))
    hook.stdin.flush()
    answers.append(json.loads(hook.stdout.readline()))
    hook.send_signal(signal.SIGTERM)
    status = hook.wait()
    print(json.dumps({"status": status, "answer_ids": [a.get("id") for a in answers]}))


if __name__ == "__main__":
    main()
