// What a handler returns, and how it becomes a protocol result.
//
// Handlers return small frozen values made by the helpers below (or a plain
// object in protocol shape, or undefined/null for continue). Which helpers a
// stage accepts is checked when the answer becomes its wire form: an illegal
// answer (respond from after_llm, deny from before_llm, approve from an
// interceptor) throws IllegalResult, which the server sends back as an error
// reply. The host would reject it anyway; failing here puts the reason in the
// hook's own words and in its own stderr.
//
// A hook approves only by saying so: allow() at before_tool, approve() at
// approve_tool. Nothing, continue_() and abstain() never approve.

import {
  BLOCKING_EVENTS, CONTEXT_EVENTS, CONTEXT_STAGES, PATCH_KEYS, ProtocolError, REQUEST_EVENTS, SUMMARY_EVENTS,
  decodeResult, decodeToolResult,
} from "./schema.js";

/** A handler's answer is not allowed at its stage, or is malformed. */
export class IllegalResult extends Error {
  constructor(message) {
    super(message);
    this.name = "IllegalResult";
  }
}

const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

function text(value, helper, what = "reason") {
  if (typeof value !== "string") throw new TypeError(`${helper}: ${what} must be a string, not ${typeName(value)}`);
  return value;
}

function optionalText(value, helper) {
  return value === undefined || value === null ? null : text(value, helper);
}

function object(value, helper) {
  if (!isObject(value)) throw new TypeError(`${helper}: a merge patch must be an object, not ${typeName(value)}`);
  return { ...value };
}

function typeName(value) {
  if (value === null) return "null";
  return Array.isArray(value) ? "array" : typeof value;
}

const join = (a, b) => (a === null ? b : b === null ? a : `${a}\n${b}`);

/**
 * A handler's answer, not yet tied to a stage. Build one with the helpers
 * (continue_, modify, respond, deny, ask, allow, abort, approve, refuse,
 * abstain); add text for the model's context with withContext().
 */
export class Decision {
  constructor(action, { patch = null, onlyAt = null, result = null, reason = null, helper = "", context = null } = {}) {
    this.action = action;
    this.patch = patch;
    this.onlyAt = onlyAt;
    this.result = result;
    this.reason = reason;
    this.helper = helper;
    this.additionalContext = context;
    Object.freeze(this);
  }

  /**
   * This answer plus `text` for the model's context (`additional_context`).
   * Taken at before_tool and after_tool with continue, modify, ask and allow;
   * called twice, the texts are joined with a newline.
   */
  withContext(added) {
    const { action, patch, onlyAt, result, reason, helper } = this;
    const context = join(this.additionalContext, text(added, "withContext()", "text"));
    return new Decision(action, { patch, onlyAt, result, reason, helper, context });
  }
}

const CONTINUE = new Decision("continue", { helper: "continue_()" });

/** Let the params pass unchanged; returning nothing means the same. At approve_tool it is abstain(). */
export const continue_ = () => CONTINUE;

/**
 * Rewrite the params with a JSON merge patch over them: members left out are
 * kept, `null` deletes one. `modify({arguments: {command: "ls -h"}})`.
 */
export function modify(patch) {
  return new Decision("modify", { patch: object(patch, "modify()"), helper: "modify()" });
}

/** before_tool: merge `changes` into the call's `arguments`. */
export function modifyArguments(changes) {
  const patch = { arguments: object(changes, "modifyArguments()") };
  return new Decision("modify", { patch, onlyAt: "before_tool", helper: "modifyArguments()" });
}

/** after_tool: change fields of the tool result (`for_llm`, `for_user`, ...). */
export function modifyResult(fields) {
  const patch = { result: object(fields, "modifyResult()") };
  return new Decision("modify", { patch, onlyAt: "after_tool", helper: "modifyResult()" });
}

/** after_llm: change fields of the model's answer (`content`, ...). */
export function modifyResponse(fields) {
  const patch = { response: object(fields, "modifyResponse()") };
  return new Decision("modify", { patch, onlyAt: "after_llm", helper: "modifyResponse()" });
}

/**
 * before_tool: answer in place of the tool, which does not run. Pass the text
 * the model sees (with options `forUser`, `silent`, `isError`), or a whole tool
 * result object (one cached from after_tool, say).
 */
export function respond(forLlm, options = {}) {
  let result;
  if (isObject(forLlm)) {
    if (Object.keys(options).length) throw new TypeError("respond(): pass a tool result object or options, not both");
    try {
      result = decodeToolResult(forLlm);
    } catch (err) {
      throw new IllegalResult(`respond(): bad tool result: ${err.message}`);
    }
  } else {
    result = { for_llm: text(forLlm, "respond()", "forLlm") };
    if (options.forUser !== undefined) result.for_user = text(options.forUser, "respond()", "forUser");
    if (options.silent) result.silent = true;
    if (options.isError) result.is_error = true;
  }
  return new Decision("respond", { result, onlyAt: "before_tool", helper: "respond()" });
}

/** before_tool: do not run the tool; `reason` reaches the model. */
export function deny(reason) {
  return new Decision("deny_tool", { reason: text(reason, "deny()"), onlyAt: "before_tool", helper: "deny()" });
}

/**
 * before_tool: let the user decide whether the tool runs; `reason` is shown
 * to them. Not a refusal: the chain goes on, and a later deny still wins.
 */
export function ask(reason) {
  return new Decision("ask", { reason: optionalText(reason, "ask()"), onlyAt: "before_tool", helper: "ask()" });
}

/**
 * before_tool: go on, and approve the call so that the agent may run it
 * without asking the user. `call` is an optional merge patch over the params,
 * as with modify(). A rewrite alone (modify) is never an approval.
 */
export function allow(reason, call) {
  const patch = call === undefined || call === null ? null : object(call, "allow(reason, call)");
  return new Decision("allow", { patch, reason: optionalText(reason, "allow()"), onlyAt: "before_tool", helper: "allow()" });
}

/** End the current turn, or with `{hard: true}` the whole agent loop. */
export function abort(reason, { hard = false } = {}) {
  return new Decision(hard ? "hard_abort" : "abort_turn", { reason: optionalText(reason, "abort()"), helper: "abort()" });
}

/** approve_tool: let the tool run, without asking the user. */
export function approve(reason) {
  return new Decision("approve", { reason: optionalText(reason, "approve()"), onlyAt: "approve_tool", helper: "approve()" });
}

/** approve_tool: do not let the tool run; `reason` reaches the model. */
export function refuse(reason) {
  return new Decision("refuse", { reason: text(reason, "refuse()"), onlyAt: "approve_tool", helper: "refuse()" });
}

const ABSTAIN = new Decision("abstain", { onlyAt: "approve_tool", helper: "abstain()" });

/**
 * approve_tool: do not decide; the agent decides as it would with no hook
 * (often: it asks the user). What returning nothing means there.
 */
export const abstain = () => ABSTAIN;

/**
 * A lifecycle handler's answer: block, or continue with texts. Build one with
 * block, context, systemMessage, summary or lifecycleResult, and combine them
 * with and(): `context("x").and(systemMessage("y"))`.
 */
export class LifecycleAnswer {
  constructor({ block = false, reason = null, additionalContext = null, systemMessage = null, summary = null } = {}) {
    this.block = block;
    this.reason = reason;
    this.additionalContext = additionalContext;
    this.systemMessage = systemMessage;
    this.summary = summary;
    Object.freeze(this);
  }

  /** Both answers: texts of one kind are joined with a newline; two blocks or two summaries are an error. */
  and(other) {
    if (other === CONTINUE) return this;
    if (!(other instanceof LifecycleAnswer)) throw new TypeError("and() takes another lifecycle answer");
    if (this.block && other.block) throw new TypeError("cannot combine two block() answers");
    if (this.summary !== null && other.summary !== null) throw new TypeError("cannot combine two summary() answers");
    return new LifecycleAnswer({
      block: this.block || other.block,
      reason: this.block ? this.reason : other.reason,
      additionalContext: join(this.additionalContext, other.additionalContext),
      systemMessage: join(this.systemMessage, other.systemMessage),
      summary: this.summary ?? other.summary,
    });
  }

  /** The helpers this answer was built with, for error messages. */
  get helper() {
    const used = [["block()", this.block], ["context()", this.additionalContext !== null],
      ["systemMessage()", this.systemMessage !== null], ["summary()", this.summary !== null]];
    return used.filter(([, on]) => on).map(([name]) => name).join(" + ") || "lifecycleResult()";
  }

  /** The wire form, without checking it against an event. */
  toResult() {
    const out = { action: this.block ? "block" : "continue" };
    if (this.block && this.reason !== null) out.reason = this.reason;
    if (this.additionalContext !== null) out.additional_context = this.additionalContext;
    if (this.systemMessage !== null) out.system_message = this.systemMessage;
    if (this.summary !== null) out.summary = this.summary;
    return out;
  }
}

/**
 * lifecycle (user_prompt_submit, stop, subagent_start, subagent_stop,
 * pre_compact, before_compaction): stop the event. At stop and subagent_stop
 * a block means "keep going" and `reason` is the agent's next instruction;
 * look at `payload.stop_hook_active` before blocking again.
 */
export function block(reason) {
  return new LifecycleAnswer({ block: true, reason: optionalText(reason, "block()") });
}

/**
 * Add context for the model: lifecycle session_start, user_prompt_submit,
 * turn_start, pre_compact. Returned alone from before_tool or after_tool it is
 * continue_().withContext(text).
 */
export function context(value) {
  return new LifecycleAnswer({ additionalContext: text(value, "context()", "text") });
}

/** lifecycle (any request event): a message shown to the user. */
export function systemMessage(value) {
  return new LifecycleAnswer({ systemMessage: text(value, "systemMessage()", "text") });
}

/** lifecycle (before_compaction): the summary the agent uses in place of its own. */
export function summary(value) {
  return new LifecycleAnswer({ summary: text(value, "summary()", "text") });
}

/** lifecycle: every member at once. `reason` only with `block: true`. */
export function lifecycleResult(members = {}) {
  const { block: blocked = false, reason = null, additionalContext = null, systemMessage: message = null } = members;
  const sum = members.summary ?? null;
  for (const [key, value] of Object.entries({ reason, additionalContext, systemMessage: message, summary: sum })) {
    if (value !== null) text(value, "lifecycleResult()", key);
  }
  if (reason !== null && !blocked) throw new TypeError("lifecycleResult(): reason is only meaningful with block: true");
  return new LifecycleAnswer({ block: Boolean(blocked), reason, additionalContext, systemMessage: message, summary: sum });
}

/**
 * Turn a handler's answer into the result object sent to the host. Throws
 * IllegalResult for anything the host would reject at `stage` (at lifecycle:
 * at `event`, the params' event).
 */
export function toWire(stage, answer, event) {
  if (stage === "lifecycle") return lifecycleToWire(answer, event);
  if (answer === undefined || answer === null) return { action: "continue" };
  if (answer instanceof LifecycleAnswer) return lifecycleAnswerAt(stage, answer);
  if (answer instanceof Decision) return withContext(stage, answer, decisionToWire(stage, answer));
  if (isObject(answer)) return plain(stage, answer, undefined);
  throw new IllegalResult(
    `a ${stage} handler must return a helper such as continue_(), an object or nothing, not ${typeName(answer)}`,
  );
}

function lifecycleAnswerAt(stage, answer) {
  const onlyContext = !answer.block && answer.systemMessage === null && answer.summary === null;
  if (CONTEXT_STAGES.includes(stage) && onlyContext && answer.additionalContext !== null) {
    return toWire(stage, CONTINUE.withContext(answer.additionalContext));
  }
  throw new IllegalResult(`${answer.helper} is not allowed at ${stage}; it belongs to lifecycle`);
}

function plain(stage, answer, event) {
  try {
    decodeResult(stage, answer, event);
  } catch (err) {
    if (!(err instanceof ProtocolError)) throw err;
    throw new IllegalResult(`handler returned a bad ${stage} result: ${err.message}`);
  }
  return answer;
}

function decisionToWire(stage, d) {
  if (d.onlyAt !== null && d.onlyAt !== stage) {
    throw new IllegalResult(`${d.helper} is not allowed at ${stage}; it belongs to ${d.onlyAt}`);
  }
  if (stage === "approve_tool") return approvalToWire(d);
  if (d.action === "continue") return { action: "continue" };
  if (d.action === "modify") return { action: "modify", [PATCH_KEYS[stage]]: d.patch };
  if (d.action === "respond") return { action: "respond", result: d.result };
  const out = { action: d.action };
  if (d.reason !== null) out.reason = d.reason;
  if (d.action === "allow" && d.patch !== null) out.call = d.patch;
  return out;
}

function approvalToWire(d) {
  if (d.action === "approve") return d.reason === null ? { approved: true } : { approved: true, reason: d.reason };
  if (d.action === "refuse") return { approved: false, reason: d.reason };
  if (d.action === "abstain" || d.action === "continue") return { action: "continue" };
  throw new IllegalResult(`${d.helper} is not allowed at approve_tool; return approve(), refuse(reason) or abstain()`);
}

function withContext(stage, d, wire) {
  if (d.additionalContext === null) return wire;
  if (!CONTEXT_STAGES.includes(stage)) {
    throw new IllegalResult(`withContext() is not allowed at ${stage}; only before_tool and after_tool take context`);
  }
  if (!["continue", "modify", "ask", "allow"].includes(d.action)) {
    throw new IllegalResult(`withContext() is not allowed with ${d.helper}: the chain stops, so the context is dropped`);
  }
  return { ...wire, additional_context: d.additionalContext };
}

function lifecycleToWire(answer, event) {
  if (!REQUEST_EVENTS.includes(event)) throw new IllegalResult(`${JSON.stringify(event)} is not a lifecycle request event`);
  if (answer === undefined || answer === null) return { action: "continue" };
  if (typeof answer === "string") answer = context(answer);
  if (answer instanceof Decision) {
    if (answer.action === "continue") return { action: "continue" };
    throw new IllegalResult(
      `${answer.helper} is not allowed at lifecycle; return continue_(), block(), context(), ` +
        "systemMessage(), summary() or a combination",
    );
  }
  if (answer instanceof LifecycleAnswer) return checkedLifecycle(answer, event);
  if (isObject(answer)) return plain("lifecycle", answer, event);
  throw new IllegalResult(
    "a lifecycle handler must return a helper such as continue_(), block(), context(), " +
      `a string (context), an object or nothing, not ${typeName(answer)}`,
  );
}

function checkedLifecycle(answer, event) {
  if (answer.block && !BLOCKING_EVENTS.includes(event)) {
    throw new IllegalResult(
      `block() is not allowed at lifecycle event ${event}; only ${BLOCKING_EVENTS.join(", ")} can be blocked`,
    );
  }
  if (answer.additionalContext !== null && !CONTEXT_EVENTS.includes(event)) {
    throw new IllegalResult(
      `context() (additional_context) is not allowed at lifecycle event ${event}; only ${CONTEXT_EVENTS.join(", ")} take context`,
    );
  }
  if (answer.summary !== null && !SUMMARY_EVENTS.includes(event)) {
    throw new IllegalResult(`summary() is not allowed at lifecycle event ${event}; only ${SUMMARY_EVENTS.join(", ")} takes one`);
  }
  return answer.toResult();
}
