// The Hook: register handlers per stage, then hook.run().
//
// The hook only records what it handles; serving lives in server.js. The
// hello answer is derived from the registrations, so the host is told exactly
// the stages and events this process handles and a config typo cannot route
// it a call it has no handler for.

import { basename, extname } from "node:path";
import { LIFECYCLE_EVENTS, REQUEST_EVENTS, STAGES, checkPattern, patternMatches } from "./schema.js";
import { serveStdio } from "./server.js";

/** The protocol version this SDK speaks. */
export const PROTOCOL_VERSION = 1;

/**
 * A hook process: its handlers and its hello answer. `name` is what the hook
 * calls itself in the hello answer (default: the script's file name);
 * `shutdownGrace` is how long, in milliseconds, pending work may still finish
 * after stdin closes or SIGTERM arrives.
 */
export class Hook {
  constructor(name, { shutdownGrace = 500 } = {}) {
    if (name !== undefined && typeof name !== "string") throw new TypeError("Hook(name): name must be a string");
    if (!(Number.isFinite(shutdownGrace) && shutdownGrace >= 0)) {
      throw new TypeError("Hook(name, {shutdownGrace}): shutdownGrace must be a number of milliseconds >= 0");
    }
    this.name = name ?? scriptName();
    this.shutdownGrace = shutdownGrace;
    /** Stage name -> handler (`lifecycle` aside). */
    this.stageHandlers = new Map();
    /** Lifecycle request event -> handler. */
    this.lifecycleHandlers = new Map();
    /** [patterns, handler] pairs, in registration order. */
    this.eventHandlers = [];
    /** The host's last `hook.hello` params, once it has sent them. */
    this.helloParams = null;
  }

  #stage(stage, fn) {
    if (typeof fn !== "function") throw new TypeError(`${camel(stage)}() takes a function`);
    if (this.stageHandlers.has(stage)) throw new Error(`${stage} already has a handler`);
    this.stageHandlers.set(stage, fn);
    return this;
  }

  /** Handle `hook.before_llm`: the request about to go to the model. */
  beforeLlm(fn) {
    return this.#stage("before_llm", fn);
  }

  /** Handle `hook.after_llm`: the model's answer. */
  afterLlm(fn) {
    return this.#stage("after_llm", fn);
  }

  /** Handle `hook.before_tool`: a tool call about to run. */
  beforeTool(fn) {
    return this.#stage("before_tool", fn);
  }

  /** Handle `hook.after_tool`: what a tool produced. */
  afterTool(fn) {
    return this.#stage("after_tool", fn);
  }

  /**
   * Handle `hook.approve_tool`: return approve(), refuse(reason) or abstain().
   * Returning nothing is abstain(): the hook does not decide, and never approves.
   */
  approveTool(fn) {
    return this.#stage("approve_tool", fn);
  }

  /**
   * Handle `hook.lifecycle` requests of the named events (session_start,
   * user_prompt_submit, turn_start, stop, subagent_start, subagent_stop,
   * pre_compact, before_compaction). The other lifecycle events are not
   * requests: observe them with onEvent("lifecycle.*").
   */
  lifecycle(events, fn) {
    const list = typeof events === "string" ? [events] : events;
    if (!Array.isArray(list) || list.length === 0) {
      throw new TypeError('lifecycle() needs the events it handles, e.g. lifecycle("session_start", fn)');
    }
    if (typeof fn !== "function") throw new TypeError("lifecycle(events, fn) takes a function");
    if (new Set(list).size !== list.length) throw new Error(`lifecycle() names an event twice: ${list.join(", ")}`);
    list.forEach((event) => this.#checkLifecycleEvent(event));
    for (const event of list) this.lifecycleHandlers.set(event, fn);
    return this;
  }

  #checkLifecycleEvent(event) {
    if (!LIFECYCLE_EVENTS.includes(event)) {
      throw new Error(`unknown lifecycle event ${JSON.stringify(event)}; request events are ${REQUEST_EVENTS.join(", ")}`);
    }
    if (!REQUEST_EVENTS.includes(event)) {
      throw new Error(
        `lifecycle event "${event}" is not a request, so no hook answers it; it arrives as the runtime event ` +
          `"lifecycle.${event}": observe it with onEvent("lifecycle.${event}", fn)`,
      );
    }
    if (this.lifecycleHandlers.has(event)) throw new Error(`lifecycle event ${event} already has a handler`);
  }

  /**
   * Observe runtime events whose kind matches any pattern (an exact kind,
   * `prefix.*` or `*`). Event handlers run one at a time in arrival order
   * (an async one is awaited before the next); what they return is ignored.
   */
  onEvent(patterns, fn) {
    const list = typeof patterns === "string" ? [patterns] : patterns;
    if (!Array.isArray(list) || list.length === 0) {
      throw new TypeError('onEvent() needs at least one pattern, e.g. onEvent("agent.*", fn)');
    }
    list.forEach(checkPattern);
    if (typeof fn !== "function") throw new TypeError("onEvent(patterns, fn) takes a function");
    this.eventHandlers.push([[...list], fn]);
    return this;
  }

  /** The `hook.hello` answer: exactly the registered stages and patterns. */
  helloResult() {
    const observe = [];
    for (const [patterns] of this.eventHandlers) {
      for (const p of patterns) if (!observe.includes(p)) observe.push(p);
    }
    const registered = (s) => this.stageHandlers.has(s) || (s === "lifecycle" && this.lifecycleHandlers.size > 0);
    return { name: this.name, version: PROTOCOL_VERSION, intercept: STAGES.filter(registered), observe };
  }

  /** Event handlers matching `kind`, in registration order. */
  handlersForEvent(kind) {
    return this.eventHandlers.filter(([patterns]) => patterns.some((p) => patternMatches(p, kind))).map(([, fn]) => fn);
  }

  /**
   * Serve the protocol until stdin closes or SIGTERM/SIGINT arrives; resolves
   * then. While serving, stdout carries protocol lines only: console.log and
   * process.stdout.write go to stderr (unless `protectStdout` is false).
   * `input` and `output` replace stdin and stdout (tests, embedding).
   */
  serve(options = {}) {
    return serveStdio(this, options);
  }

  /** Serve on stdin/stdout, then exit the process with status 0. */
  async run() {
    await this.serve();
    process.exit(0);
  }
}

function scriptName() {
  const script = process.argv[1];
  return script ? basename(script, extname(script)) : "hook";
}

const camel = (stage) => stage.replace(/_(.)/g, (_, c) => c.toUpperCase());
