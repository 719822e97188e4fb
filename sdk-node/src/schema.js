// Shape checks for what crosses the wire, on the hook's side.
//
// The host already validates the params it sends; the SDK checks them again
// so that a handler can rely on `call.tool` being a string and a hook fails
// one call loudly (-32602) instead of crashing deep inside a handler. Results
// are checked for the opposite reason: a handler that returns a plain object
// the host would reject gets a clear error in its own stderr, not a silent
// `on_error` on the host's side. Messages follow the host's (serde's)
// wording, as the Python SDK's do, so they read the same whichever side
// reports them.

/** A value does not have the shape the protocol requires. */
export class ProtocolError extends Error {
  constructor(message) {
    super(message);
    this.name = "ProtocolError";
  }
}

/** The stages, in the order the protocol lists them. */
export const STAGES = Object.freeze(["before_llm", "after_llm", "before_tool", "after_tool", "approve_tool", "lifecycle"]);

/** Every lifecycle event, in the order the spec lists them. */
export const LIFECYCLE_EVENTS = Object.freeze([
  "session_start", "session_end", "user_prompt_submit", "turn_start", "turn_end", "stop", "subagent_start",
  "subagent_stop", "pre_compact", "notification", "on_error", "on_max_iterations", "before_compaction",
  "after_compaction",
]);
/** Events sent as `hook.lifecycle` requests; the others arrive as runtime events `lifecycle.<event>`. */
export const REQUEST_EVENTS = Object.freeze([
  "session_start", "user_prompt_submit", "turn_start", "stop", "subagent_start", "subagent_stop", "pre_compact",
  "before_compaction",
]);
/** Request events a hook may answer with `block`. */
export const BLOCKING_EVENTS = Object.freeze([
  "user_prompt_submit", "stop", "subagent_start", "subagent_stop", "pre_compact", "before_compaction",
]);
/** Request events whose answer may carry `additional_context`. */
export const CONTEXT_EVENTS = Object.freeze(["session_start", "user_prompt_submit", "turn_start", "pre_compact"]);
/** Request events whose answer may carry `summary`. */
export const SUMMARY_EVENTS = Object.freeze(["before_compaction"]);
/** The interceptor stages whose results may carry `additional_context`. */
export const CONTEXT_STAGES = Object.freeze(["before_tool", "after_tool"]);

/** The member of an interceptor's result that carries its merge patch. */
export const PATCH_KEYS = Object.freeze({
  before_llm: "request",
  after_llm: "response",
  before_tool: "call",
  after_tool: "result",
});

const LLM_ACTIONS = ["continue", "modify", "abort_turn", "hard_abort"];
/** Which actions each interceptor stage allows (section 6 of the spec). */
export const INTERCEPTOR_ACTIONS = Object.freeze({
  before_llm: LLM_ACTIONS,
  after_llm: LLM_ACTIONS,
  before_tool: ["continue", "modify", "respond", "deny_tool", "ask", "allow", "abort_turn", "hard_abort"],
  after_tool: LLM_ACTIONS,
});
const ALL_ACTIONS = INTERCEPTOR_ACTIONS.before_tool;
const CONTEXT_ACTIONS = ["continue", "modify", "ask", "allow"];
const EXPECTED_ACTIONS = "continue, modify, respond, deny_tool, ask, allow, abort_turn or hard_abort";

// --- serde-style messages ----------------------------------------------------

const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

function unexpected(value) {
  if (value === null || value === undefined) return "null";
  if (typeof value === "boolean") return `boolean \`${value}\``;
  if (typeof value === "bigint") return `integer \`${value}\``;
  if (typeof value === "number") {
    return Number.isInteger(value) ? `integer \`${value}\`` : `floating point \`${value}\``;
  }
  if (typeof value === "string") return `string ${quote(value)}`;
  if (Array.isArray(value)) return "sequence";
  return "map";
}

function quote(text) {
  return `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
}

const invalidType = (value, expected) =>
  new ProtocolError(`invalid type: ${unexpected(value)}, expected ${expected}`);

// --- tiny combinators ----------------------------------------------------------

const string = (v) => {
  if (typeof v !== "string") throw invalidType(v, "a string");
};
const boolean = (v) => {
  if (typeof v !== "boolean") throw invalidType(v, "a boolean");
};
const mapping = (v) => {
  if (!isObject(v)) throw invalidType(v, "a map");
};
const anything = () => {};
const nullable = (check) => (v) => {
  if (v !== null && v !== undefined) check(v);
};
const sequence = (item) => (v) => {
  if (!Array.isArray(v)) throw invalidType(v, "a sequence");
  v.forEach(item);
};
function unsigned(kind) {
  return (v) => {
    if (!(typeof v === "bigint" || Number.isInteger(v))) throw invalidType(v, kind);
    if (v < 0) throw new ProtocolError(`invalid value: integer \`${v}\`, expected ${kind}`);
  };
}
function oneOf(...variants) {
  return (v) => {
    string(v);
    if (!variants.includes(v)) {
      const listed = variants.map((x) => `\`${x}\``).join(", ");
      throw new ProtocolError(`unknown variant \`${v}\`, expected one of ${listed}`);
    }
  };
}
/** An object with known members (checked when present; `null` optional ones read as absent) and unknown ones (kept). */
function struct(name, fields) {
  const entries = Object.entries(fields);
  return (value) => {
    if (!isObject(value)) throw invalidType(value, `struct ${name}`);
    for (const [key, [check, required]] of entries) {
      const present = Object.hasOwn(value, key);
      if (present && (required || value[key] !== null)) check(value[key]);
      else if (required) throw new ProtocolError(`missing field \`${key}\``);
    }
  };
}

// --- the protocol's shapes ---------------------------------------------------------

const optStr = nullable(string);
const META = struct("Meta", {
  agent_id: [optStr, false], session_key: [optStr, false], turn_id: [optStr, false],
  parent_turn_id: [optStr, false], transcript_path: [optStr, false], cwd: [optStr, false],
  permission_mode: [optStr, false], model: [optStr, false], tenant_id: [optStr, false],
  user_id: [optStr, false],
  iteration: [nullable(unsigned("u64")), false], source: [optStr, false],
});
const TOOL_RESULT = struct("ToolResult", {
  for_llm: [string, true], for_user: [optStr, false],
  silent: [nullable(boolean), false], is_error: [nullable(boolean), false],
});
const MESSAGE = struct("Message", { role: [string, true], content: [anything, false] });
const COMMON = { meta: [META, false], channel: [optStr, false], chat_id: [optStr, false] };
const TOOL_CALL = {
  ...COMMON, tool: [string, true], arguments: [mapping, false], tool_call_id: [optStr, false],
};

/** A runtime event's `source`: a name, or PicoClaw's `{component, name}`. */
function eventSource(value) {
  if (value === null || typeof value === "string") return;
  if (isObject(value) && typeof value.component === "string") return optStr(value.name);
  throw new ProtocolError(`data ${unexpected(value)} did not match any variant of untagged enum EventSource`);
}

function checkId(value) {
  if (!(typeof value === "string" || typeof value === "bigint" || Number.isInteger(value))) {
    throw new ProtocolError(`data ${unexpected(value)} did not match any variant of untagged enum Id`);
  }
}

const PARAMS = {
  "hook.before_llm": struct("BeforeLlmParams", {
    ...COMMON, model: [string, true], messages: [sequence(MESSAGE), false],
    tools: [sequence(anything), false], options: [mapping, false],
  }),
  "hook.after_llm": struct("AfterLlmParams", {
    ...COMMON, model: [string, true],
    response: [struct("LlmResponse", {
      content: [string, false], tool_calls: [sequence(anything), false],
      finish_reason: [optStr, false], usage: [anything, false],
    }), true],
  }),
  "hook.before_tool": struct("ToolCall", TOOL_CALL),
  "hook.approve_tool": struct("ToolCall", TOOL_CALL),
  "hook.after_tool": struct("AfterToolParams", {
    ...TOOL_CALL, result: [TOOL_RESULT, true], duration_ms: [nullable(unsigned("u64")), false],
  }),
  "hook.hello": struct("HelloParams", {
    name: [string, true], version: [unsigned("u32"), true], modes: [nullable(sequence(string)), false],
    host: [nullable(struct("HostInfo", { name: [string, true], version: [string, true] })), false],
  }),
  "hook.lifecycle": struct("LifecycleParams", {
    event: [oneOf(...LIFECYCLE_EVENTS), true], meta: [META, false], payload: [mapping, false],
  }),
  "hook.runtime_event": struct("RuntimeEvent", {
    id: [string, true], kind: [string, true], time: [string, true], payload: [anything, false],
    source: [eventSource, false], scope: [nullable(META), false],
    severity: [nullable(oneOf("debug", "info", "warn", "error")), false],
  }),
  "$/cancel_request": struct("CancelParams", { id: [checkId, true] }),
};

/**
 * Throw a ProtocolError unless `params` fit `method`. Methods this module does
 * not know pass: the SDK answers them -32601 before their params matter.
 */
export function checkParams(method, params) {
  PARAMS[method]?.(params);
  if (method === "hook.lifecycle" && !REQUEST_EVENTS.includes(params.event)) {
    const event = params.event;
    throw new ProtocolError(
      `event \`${event}\` is not a request event; it reaches hooks as the runtime event \`lifecycle.${event}\``,
    );
  }
}

// --- results -------------------------------------------------------------------------

/**
 * Check a tool result and return its canonical form: `for_llm` always,
 * `for_user` when a string, `silent` and `is_error` only when true, unknown
 * members kept.
 */
export function decodeToolResult(value) {
  TOOL_RESULT(value);
  const out = { ...value };
  if (typeof out.for_user !== "string") delete out.for_user;
  if (!out.silent) delete out.silent;
  if (!out.is_error) delete out.is_error;
  return out;
}

/**
 * Decode a stage result as the host will and return the canonical decision
 * (the form of spec/vectors/methods). Throws ProtocolError with the reason for
 * anything the host would reject. At lifecycle, pass `event` to check what the
 * event allows too.
 */
export function decodeResult(stage, value, event) {
  if (!isObject(value)) throw new ProtocolError(`malformed ${stage} result: a result must be a JSON object`);
  if (stage === "lifecycle") return decodeLifecycle(value, event);
  const reason = value.reason;
  optStr(reason);
  if (stage === "approve_tool") return decodeApproval(value, reason ?? null);
  if (!Object.hasOwn(PATCH_KEYS, stage)) throw new ProtocolError(`unknown stage ${JSON.stringify(stage)}`);
  let action = value.action;
  optStr(action);
  const context = CONTEXT_STAGES.includes(stage) ? value.additional_context : undefined;
  optStr(context);
  if (!action) action = "continue";
  knownAction(action);
  if (!INTERCEPTOR_ACTIONS[stage].includes(action)) {
    throw new ProtocolError(`action \`${action}\` is not allowed at ${stage}`);
  }
  const patch = value[PATCH_KEYS[stage]];
  nullable(mapping)(patch);
  if (stage === "before_tool") nullable(TOOL_RESULT)(value.result);
  const decision = interceptorDecision(action, value, patch ?? null, reason ?? null);
  if (context !== null && context !== undefined && CONTEXT_ACTIONS.includes(action)) {
    decision.additional_context = context;
  }
  return decision;
}

function knownAction(action) {
  if (action && !ALL_ACTIONS.includes(action)) {
    throw new ProtocolError(`unknown action ${quote(action)} (expected ${EXPECTED_ACTIONS})`);
  }
}

function decodeApproval(value, reason) {
  const action = value.action;
  optStr(action);
  knownAction(action ?? "");
  if (Object.hasOwn(value, "approved")) {
    boolean(value.approved);
    return { approved: value.approved, reason };
  }
  if (action === null || action === undefined) {
    throw new ProtocolError(
      "malformed approve_tool result: missing field `approved` " +
        '(or `action: "continue"` to leave the decision to the agent)',
    );
  }
  if (action !== "" && action !== "continue") throw new ProtocolError(`action \`${action}\` is not allowed at approve_tool`);
  return { action: "continue" };
}

function interceptorDecision(action, value, patch, reason) {
  if (action === "continue") return { action: "continue" };
  if (action === "modify") return { action: "modify", patch: patch ?? {} };
  if (action === "allow") return { action: "allow", patch, reason };
  if (action === "respond") {
    if (value.result === null || value.result === undefined) {
      throw new ProtocolError("action `respond` needs a `result` object with `for_llm`");
    }
    return { action: "respond", result: decodeToolResult(value.result) };
  }
  return { action, reason };
}

const LIFECYCLE_TEXTS = ["reason", "additional_context", "system_message", "summary"];

function decodeLifecycle(value, event) {
  if (event !== undefined && event !== null && !REQUEST_EVENTS.includes(event)) {
    throw new ProtocolError(`lifecycle event \`${event}\` is not a request event and takes no result`);
  }
  const action = value.action;
  if (typeof action === "string" && ALL_ACTIONS.includes(action) && action !== "continue") {
    throw new ProtocolError(`action \`${action}\` is not allowed at lifecycle`);
  }
  try {
    optStr(action);
    if (action && action !== "continue" && action !== "block") {
      throw new ProtocolError(`unknown lifecycle action ${quote(action)} (expected continue or block)`);
    }
    for (const key of LIFECYCLE_TEXTS) optStr(value[key]);
  } catch (err) {
    throw new ProtocolError(`malformed lifecycle result: ${err.message}`);
  }
  const decision = { action: action === "block" ? "block" : "continue" };
  for (const key of LIFECYCLE_TEXTS) decision[key] = value[key] ?? null;
  if (event !== undefined && event !== null) checkLifecycleDecision(event, decision);
  return decision;
}

/** Throw a ProtocolError unless a decoded lifecycle `decision` is legal at `event`. */
export function checkLifecycleDecision(event, decision) {
  if (!REQUEST_EVENTS.includes(event)) {
    throw new ProtocolError(`lifecycle event \`${event}\` is not a request event and takes no result`);
  }
  if (decision.action === "block" && !BLOCKING_EVENTS.includes(event)) {
    throw new ProtocolError(`action \`block\` is not allowed at lifecycle event \`${event}\`, which cannot be blocked`);
  }
  for (const [field, allowed] of [["additional_context", CONTEXT_EVENTS], ["summary", SUMMARY_EVENTS]]) {
    if (decision[field] !== null && decision[field] !== undefined && !allowed.includes(event)) {
      throw new ProtocolError(`field \`${field}\` is not allowed at lifecycle event \`${event}\``);
    }
  }
}

// --- observe patterns -------------------------------------------------------------

/** PicoClaw's short names for its agent event kinds (spec section 4.3), with the kind each stands for. */
export const SHORT_NAMES = Object.freeze({
  turn_start: "agent.turn.start", turn_end: "agent.turn.end", llm_request: "agent.llm.request",
  llm_delta: "agent.llm.delta", llm_response: "agent.llm.response", llm_retry: "agent.llm.retry",
  context_compress: "agent.context.compress", session_summarize: "agent.session.summarize",
  tool_exec_start: "agent.tool.exec_start", tool_exec_end: "agent.tool.exec_end",
  tool_exec_skipped: "agent.tool.exec_skipped", steering_injected: "agent.steering.injected",
  follow_up_queued: "agent.follow_up.queued", interrupt_received: "agent.interrupt.received",
  subturn_spawn: "agent.subturn.spawn", subturn_end: "agent.subturn.end",
  subturn_result_delivered: "agent.subturn.result_delivered", subturn_orphan: "agent.subturn.orphan",
  error: "agent.error",
});
const EVERY = ["*", "all", ""];

/** Throw a ProtocolError unless `pattern` is an `observe` entry (spec section 4.3). */
export function checkPattern(pattern) {
  if (typeof pattern !== "string") throw invalidType(pattern, "a string");
  if (EVERY.includes(pattern) || Object.hasOwn(SHORT_NAMES, pattern)) return;
  if (!pattern.includes(".") && !pattern.includes("*")) {
    throw new ProtocolError(`bad observe pattern: ${quote(pattern)}: unknown event name`);
  }
  const stem = pattern.endsWith(".*") ? pattern.slice(0, -2) : pattern;
  if (stem === "" || stem.includes("*")) throw new ProtocolError(`bad observe pattern: ${quote(pattern)}`);
}

/** Whether an event of `kind` is matched by `pattern` (spec section 4.3). */
export function patternMatches(pattern, kind) {
  if (EVERY.includes(pattern)) return true;
  const full = Object.hasOwn(SHORT_NAMES, pattern) ? SHORT_NAMES[pattern] : pattern;
  if (full.endsWith(".*")) return kind.startsWith(full.slice(0, -1));
  return kind === full;
}
