// Drive a real hook process from a test, the way the host would.
//
//   const hook = await HookProcess.start(["node", "guard.mjs"]);
//   assert.deepEqual(await hook.call("before_tool", {tool: "shell", arguments: {command: "sudo ls"}}), {...});
//   assert.equal(await hook.close(), 0);
//
// It starts the process, performs the hello, then lets a test send requests
// and notifications and wait for answers by id. Every stdout line that is not
// JSON is kept in `garbage` (it should stay empty: stdout is the wire) and
// stderr in `stderr`. Works with any hook, SDK or not.

import { spawn } from "node:child_process";

/** The hook answered a call with a JSON-RPC error. */
export class HookError extends Error {
  constructor(error) {
    super(`${error?.code}: ${error?.message}`);
    this.name = "HookError";
    this.code = error?.code;
  }
}

/** A hook process speaking the protocol over pipes. */
export class HookProcess {
  constructor(argv, { cwd, env, timeout = 10_000 } = {}) {
    this.timeout = timeout;
    /** Every JSON message read from stdout, in order. */
    this.messages = [];
    /** Every stdout line that was not JSON. */
    this.garbage = [];
    /** Everything the hook wrote to stderr so far. */
    this.stderr = "";
    /** The hello result, once start() has performed the handshake. */
    this.helloResult = null;
    this.nextId = 1;
    this.waiters = new Map();
    this.proc = spawn(argv[0], argv.slice(1), { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
    this.exited = new Promise((resolve) => this.proc.once("close", (code, signal) => resolve(code ?? signal)));
    this.proc.stdin.on("error", () => {}); // a hook that exits early: its status says why
    this.proc.stderr.setEncoding("utf8").on("data", (s) => (this.stderr += s));
    this.#readLines();
  }

  /** Start `argv` and perform the hello (unless `hello: false`). */
  static async start(argv, { hello = true, ...options } = {}) {
    const hook = new HookProcess(argv, options);
    if (hello) hook.helloResult = await hook.call("hello", { name: "test", version: 1 });
    return hook;
  }

  #readLines() {
    let pending = "";
    this.proc.stdout.setEncoding("utf8").on("data", (chunk) => {
      const lines = (pending + chunk).split("\n");
      pending = lines.pop();
      for (const line of lines) this.#onLine(line);
    });
  }

  #onLine(line) {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      this.garbage.push(line);
      return;
    }
    this.messages.push(msg);
    const waiter = this.waiters.get(msg?.id);
    if (waiter) {
      this.waiters.delete(msg.id);
      waiter(msg);
    }
  }

  /** Write one raw line (a newline is added). */
  sendLine(line) {
    this.proc.stdin.write(`${line}\n`);
  }

  /** Send a request and resolve with the whole response message. */
  request(method, params, id = this.nextId++) {
    const answered = new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(id);
        reject(new Error(`no answer to ${method} (id ${JSON.stringify(id)}) within ${this.timeout} ms; stderr: ${this.stderr}`));
      }, this.timeout);
      this.waiters.set(id, (msg) => {
        clearTimeout(timer);
        resolve(msg);
      });
    });
    this.sendLine(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    return answered;
  }

  /** Call `hook.<stage>` and resolve with its result; reject with HookError on an error answer. */
  async call(stage, params) {
    const msg = await this.request(`hook.${stage}`, params);
    if (Object.hasOwn(msg, "error")) throw new HookError(msg.error);
    return msg.result;
  }

  /** Send a notification (never answered). */
  notify(method, params) {
    this.sendLine(JSON.stringify({ jsonrpc: "2.0", method, params }));
  }

  /** Close stdin and resolve with the exit status; kill the hook if it does not exit in time. */
  async close() {
    this.proc.stdin.end();
    const timer = setTimeout(() => this.proc.kill("SIGKILL"), this.timeout);
    const status = await this.exited;
    clearTimeout(timer);
    return status;
  }
}
