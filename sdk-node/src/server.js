// Serving the protocol over stdio: one Session (ids in flight, dispatch,
// cancellation, events in order) and the transport around it.
//
// - Each request runs its handler at once: a sync handler answers in the same
//   turn of the event loop, an async one when its promise settles, so a slow
//   approval never holds up other calls; answers go out in any order, by id.
// - Answers produced while one chunk of input is dispatched, or in one
//   microtask round, are written with one write.
// - A request id stays in `inflight` until someone takes it out; only the one
//   who takes it answers: the handler when it settles, or $/cancel_request
//   (-32800). So every request is answered at most once.
// - Runtime events run one at a time, in arrival order, on a promise chain.
// - stdout is the wire: while serving, process.stdout.write (so console.log)
//   goes to stderr, and protocol lines go through the saved original write.

import { checkParams } from "./schema.js";
import { toWire } from "./results.js";
import {
  INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, REQUEST_CANCELLED, classify,
  encodeError, encodeResult,
} from "./wire.js";

const DRAIN_POLL_MS = 5;
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Write a line of the SDK's own to stderr (never to the wire). */
export function log(message) {
  process.stderr.write(`@hookhost/sdk: ${message}\n`);
}

/** One conversation with a host: its ids in flight and where its answers go. */
export class Session {
  constructor(hook, send) {
    this.hook = hook;
    this.send = send;
    this.inflight = new Map();
    this.events = Promise.resolve();
    this.eventsPending = 0;
  }

  /** Whether a request or an event is still pending. */
  busy() {
    return this.inflight.size > 0 || this.eventsPending > 0;
  }

  /** The peer is gone: abort pending work, answer nothing more. */
  close() {
    for (const job of this.inflight.values()) job.abort();
    this.inflight.clear();
  }

  /** Dispatch one line (without its newline). */
  onLine(line) {
    const msg = classify(line);
    if (msg.kind === "request") this.#onRequest(msg.id, msg.method, msg.params);
    else if (msg.kind === "notification") this.#onNotification(msg.method, msg.params);
    else if (msg.kind === "parse_error") {
      log(`ignoring a message that is not JSON: ${JSON.stringify(line.slice(0, 200))}`);
      this.send(encodeError(null, PARSE_ERROR, "parse error: the message is not JSON"));
    } else if (msg.kind === "invalid") {
      log(`invalid message (${msg.problem}): ${JSON.stringify(line.slice(0, 200))}`);
      this.send(encodeError(msg.id, INVALID_REQUEST, `invalid request: ${msg.problem}`));
    }
    // A response: the host sends none in protocol version 1; ignore it.
  }

  #onRequest(id, method, params) {
    const hook = this.hook;
    const stage = method.startsWith("hook.") ? method.slice(5) : null;
    let fn = stage === "lifecycle" ? null : hook.stageHandlers.get(stage);
    if (!fn && !(stage === "lifecycle" && hook.lifecycleHandlers.size > 0)) {
      if (method === "hook.hello") this.#hello(id, params);
      else this.send(encodeError(id, METHOD_NOT_FOUND, `method not found: ${method}`));
      return;
    }
    try {
      checkParams(method, params);
    } catch (err) {
      this.send(encodeError(id, INVALID_PARAMS, `invalid params for ${method}: ${err.message}`));
      return;
    }
    if (this.inflight.has(id)) {
      this.send(encodeError(id, INVALID_REQUEST, "a request with this id is already in flight"));
      return;
    }
    fn ??= hook.lifecycleHandlers.get(params.event);
    if (!fn) {
      // The host sends every lifecycle request to a hook that intercepts
      // "lifecycle"; one this hook has no handler for passes.
      this.send(encodeResult(id, { action: "continue" }));
      return;
    }
    this.#start(id, stage, fn, withDefaults(stage, params));
  }

  #start(id, stage, fn, params) {
    const job = new Job(id, this.hook.helloParams);
    this.inflight.set(id, job);
    const finish = (value) => this.#answer(id, job, () => encodeResult(id, toWire(stage, value, params.event)));
    const fail = (err) => this.#answer(id, job, () => { throw err; });
    let value;
    try {
      value = fn(params, job);
    } catch (err) {
      fail(err);
      return;
    }
    if (value !== null && typeof value === "object" && typeof value.then === "function") {
      Promise.resolve(value).then(finish, fail);
    } else finish(value);
  }

  #answer(id, job, encode) {
    if (this.inflight.get(id) !== job) return; // cancelled or closed: answered already, or never
    this.inflight.delete(id);
    let line;
    try {
      line = encode();
    } catch (err) {
      const name = err instanceof Error ? err.name : "Error";
      const message = err instanceof Error ? err.message : String(err);
      log(`the handler failed on request ${String(id)}: ${err instanceof Error ? err.stack : message}`);
      line = encodeError(id, INTERNAL_ERROR, `${name}: ${message}`);
    }
    this.send(line);
  }

  #hello(id, params) {
    try {
      checkParams("hook.hello", params);
    } catch (err) {
      this.send(encodeError(id, INVALID_PARAMS, `invalid params for hook.hello: ${err.message}`));
      return;
    }
    this.hook.helloParams = params;
    this.send(encodeResult(id, this.hook.helloResult()));
  }

  #onNotification(method, params) {
    if (method === "$/cancel_request") this.#cancel(params.id);
    else if (method === "hook.runtime_event") this.#event(params);
    // Any other notification is unknown and ignored, as the spec requires.
  }

  #cancel(target) {
    const job = typeof target === "string" || typeof target === "number" ? this.inflight.get(target) : undefined;
    if (job === undefined) return; // unknown or already answered: ignore
    this.inflight.delete(target);
    job.abort();
    this.send(encodeError(target, REQUEST_CANCELLED, "request cancelled"));
  }

  #event(params) {
    try {
      checkParams("hook.runtime_event", params);
    } catch (err) {
      log(`ignoring a malformed runtime event: ${err.message}`);
      return;
    }
    const handlers = this.hook.handlersForEvent(params.kind);
    if (handlers.length === 0) return;
    this.eventsPending++;
    this.events = this.events.then(async () => {
      for (const fn of handlers) {
        try {
          await fn(params);
        } catch (err) {
          log(`an event handler failed on ${params.kind}: ${err instanceof Error ? err.stack : String(err)}`);
        }
      }
      this.eventsPending--;
    });
  }
}

/**
 * One request in flight, and the context its handler gets: `id`, `hello`,
 * and `signal`, created on first use (an AbortController per call was a
 * tenth of a fast hook's time) and aborted by cancel or shutdown.
 */
class Job {
  #controller = null;

  constructor(id, hello) {
    this.id = id;
    this.hello = hello;
  }

  get signal() {
    this.#controller ??= new AbortController();
    return this.#controller.signal;
  }

  abort() {
    this.#controller?.abort();
  }
}

/** The spec's defaults for members "always sent by the host", and an empty meta, so handlers need no checks. */
function withDefaults(stage, params) {
  params.meta ??= {};
  if (stage === "before_llm") params.messages ??= [];
  else if (stage === "lifecycle") params.payload ??= {};
  else if (stage !== "after_llm") params.arguments ??= {};
  return params;
}

/** Serve `hook` on stdin/stdout (or `input`/`output`) until EOF or SIGTERM/SIGINT. */
export function serveStdio(hook, { input = process.stdin, output, protectStdout = output === undefined } = {}) {
  const wire = protectStdout ? takeStdout() : { write: (s) => output.write(s), restore() {}, stream: output };
  const send = batcher(wire.write);
  const session = new Session(hook, send);
  return new Promise((resolve) => {
    let stopping = false;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      input.off("data", onData);
      process.off("SIGTERM", stop);
      process.off("SIGINT", stop);
      drain(session, hook.shutdownGrace).then(() => {
        session.close();
        send.flush();
        wire.restore();
        input.pause();
        flushed(wire.stream).then(resolve);
      });
    };
    const onData = lineSplitter((line) => session.onLine(line));
    input.on("data", onData);
    input.once("end", () => {
      onData.end();
      stop();
    });
    input.once("error", stop);
    wire.stream?.on("error", stop); // the host has gone (EPIPE); stop is idempotent
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
    input.resume();
  });
}

/**
 * `send(line)` queues a line; the queue is written once the event loop has
 * dispatched every chunk it read in this turn (setImmediate runs right after
 * the poll phase), so a burst of calls costs one write. `send.flush()` writes now.
 */
function batcher(write) {
  let queued = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (queued.length === 0) return;
    const data = queued.length === 1 ? queued[0] : queued.join("");
    queued = [];
    write(data);
  };
  const send = (line) => {
    queued.push(line);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  send.flush = flush;
  return send;
}

/** A `data` listener that cuts the byte stream into lines and hands each non-blank one over, as UTF-8 text. */
function lineSplitter(onLine) {
  let pending = [];
  const emit = (bytes) => {
    // toString replaces bad UTF-8 with U+FFFD; only a line holding one is decoded again, strictly.
    let text = bytes.toString("utf8");
    if (text.includes("\uFFFD")) {
      try {
        text = decoder.decode(bytes);
      } catch {
        text = "\u0000not UTF-8"; // fails to parse: answered as a parse error
      }
    }
    if (/\S/.test(text)) onLine(text);
  };
  const onData = (chunk) => {
    let start = 0;
    let nl = chunk.indexOf(10);
    while (nl !== -1) {
      const piece = chunk.subarray(start, nl);
      emit(pending.length ? Buffer.concat([...pending, piece]) : piece);
      pending = [];
      start = nl + 1;
      nl = chunk.indexOf(10, start);
    }
    if (start < chunk.length) pending.push(chunk.subarray(start));
  };
  onData.end = () => {
    if (pending.length) emit(Buffer.concat(pending));
    pending = [];
  };
  return onData;
}

/** Wait until nothing is pending, or `graceMs` has passed. */
async function drain(session, graceMs) {
  const deadline = Date.now() + graceMs;
  while (session.busy() && Date.now() < deadline) await new Promise((r) => setTimeout(r, DRAIN_POLL_MS));
}

/** Resolves once `stream` has written what it holds (stdout is asynchronous on some platforms). */
function flushed(stream) {
  if (!stream || stream.writableLength === 0 || stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    stream.once("drain", resolve);
    stream.once("error", resolve);
  });
}

/**
 * Reserve stdout for the wire: process.stdout.write, which console.log and
 * friends use, is pointed at stderr; protocol lines go through the original.
 * Returns `{write, restore, stream}`.
 */
function takeStdout() {
  const stdout = process.stdout;
  const original = stdout.write;
  const realWrite = original.bind(stdout);
  stdout.write = (chunk, encoding, cb) => process.stderr.write(chunk, encoding, cb);
  return {
    write: realWrite,
    stream: stdout,
    restore() {
      stdout.write = original;
    },
  };
}
