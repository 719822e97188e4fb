// Types of @hookhost/sdk. Hand-written beside the plain-JS source (src/*.js)
// and checked by `tsc --noEmit` together with test/types.ts.

/** A JSON value as it crosses the wire. */
export type Json = string | number | boolean | null | Json[] | JsonObject;
/** A JSON object; unknown keys are kept as they came. */
export type JsonObject = { [key: string]: Json | undefined };

/** The six stages, in the protocol's order. */
export type Stage = "before_llm" | "after_llm" | "before_tool" | "after_tool" | "approve_tool" | "lifecycle";
export declare const STAGES: readonly Stage[];
export declare const PROTOCOL_VERSION: 1;

/** Lifecycle events the host sends as `hook.lifecycle` requests. */
export type LifecycleRequestEvent =
  | "session_start" | "user_prompt_submit" | "turn_start" | "stop" | "subagent_start" | "subagent_stop"
  | "pre_compact" | "before_compaction";

/** Where a call comes from (`meta`, and a runtime event's `scope`); every member optional. */
export interface Meta {
  agent_id?: string | null;
  session_key?: string | null;
  turn_id?: string | null;
  parent_turn_id?: string | null;
  iteration?: number | null;
  source?: string | null;
  transcript_path?: string | null;
  cwd?: string | null;
  permission_mode?: string | null;
  model?: string | null;
  tenant_id?: string | null;
  user_id?: string | null;
  [key: string]: Json | undefined;
}

interface Common {
  /** `{}` when the agent said nothing. */
  meta: Meta;
  channel?: string | null;
  chat_id?: string | null;
  [key: string]: Json | undefined;
}

/** A model message: `role` plus the provider's keys. */
export interface Message {
  role: string;
  content?: Json;
  [key: string]: Json | undefined;
}

/** Params of `before_llm`. */
export interface LlmRequest extends Common {
  model: string;
  messages: Message[];
  tools?: Json[];
  options?: JsonObject;
}

/** Params of `after_llm`. */
export interface LlmResponse extends Common {
  model: string;
  response: {
    content?: string;
    tool_calls?: Json[];
    finish_reason?: string | null;
    usage?: Json;
    [key: string]: Json | undefined;
  };
}

/** Params of `before_tool` and `approve_tool`. */
export interface ToolCall extends Common {
  tool: string;
  /** `{}` when the call has none. */
  arguments: JsonObject;
  tool_call_id?: string | null;
}

/** A tool result: what the model (and the user) see of a tool's output. */
export interface ToolResult {
  for_llm: string;
  for_user?: string | null;
  silent?: boolean | null;
  is_error?: boolean | null;
  [key: string]: Json | undefined;
}

/** Params of `after_tool`: the call and what the tool produced. */
export interface ToolOutput extends ToolCall {
  result: ToolResult;
  duration_ms?: number | null;
}

/** Params of `hook.lifecycle`. */
export interface LifecycleEvent {
  event: LifecycleRequestEvent;
  meta: Meta;
  /** `{}` when the event carries nothing; members depend on the event. */
  payload: JsonObject;
  [key: string]: Json | undefined;
}

/** A `hook.runtime_event` notification. */
export interface RuntimeEvent {
  id: string;
  kind: string;
  time: string;
  source?: string | { component: string; name?: string | null } | null;
  scope?: Meta | null;
  severity?: "debug" | "info" | "warn" | "error" | null;
  payload?: Json;
  [key: string]: Json | undefined;
}

/** The host's `hook.hello` params. */
export interface Hello {
  name: string;
  version: number;
  modes?: string[] | null;
  host?: { name: string; version: string } | null;
  [key: string]: Json | undefined;
}

/** What a stage handler gets besides the params. */
export interface CallContext {
  /** The request's id, as the host sent it. */
  id: string | number | bigint;
  /** Aborted when the host cancels the call ($/cancel_request) or the hook shuts down. */
  signal: AbortSignal;
  /** The host's hello params. */
  hello: Hello | null;
}

type Answer<T> = T | undefined | null | void;
type MaybeAsync<T> = Answer<T> | Promise<Answer<T>>;

/** The answer of a stage handler, or of a handler at the wrong stage (checked when it is sent). */
export declare class Decision {
  private constructor();
  readonly action: string;
  readonly reason: string | null;
  readonly additionalContext: string | null;
  /**
   * This answer plus `text` for the model's context. Taken at before_tool and
   * after_tool with continue, modify, ask and allow.
   */
  withContext(text: string): Decision;
}

/** A lifecycle handler's answer: block, or continue with texts. */
export declare class LifecycleAnswer {
  private constructor();
  readonly block: boolean;
  readonly reason: string | null;
  readonly additionalContext: string | null;
  readonly systemMessage: string | null;
  readonly summary: string | null;
  /** Both answers; texts of one kind are joined with a newline. */
  and(other: LifecycleAnswer | Decision): LifecycleAnswer;
  /** The wire form, unchecked. */
  toResult(): JsonObject;
}

/** A handler's answer is not allowed at its stage, or is malformed. */
export declare class IllegalResult extends Error {}
/** A value does not have the shape the protocol requires. */
export declare class ProtocolError extends Error {}

/** A plain result object in protocol shape (checked before it is sent). */
export type RawResult = JsonObject;

export type StageHandler<P, R = Decision> = (params: P, context: CallContext) => MaybeAsync<R | RawResult>;

/** A hook process: its handlers per stage and its hello answer. */
export declare class Hook {
  /**
   * `name` is what the hook calls itself in the hello answer (default: the
   * script's file name); `shutdownGrace` is how long, in ms, pending work may
   * still finish after stdin closes or SIGTERM (default 500).
   */
  constructor(name?: string, options?: { shutdownGrace?: number });
  readonly name: string;
  /** The host's last hello params, once it has sent them. */
  readonly helloParams: Hello | null;
  /** `hook.before_llm`: continue_(), modify(), abort(); a patch over the request. */
  beforeLlm(fn: StageHandler<LlmRequest>): this;
  /** `hook.after_llm`: continue_(), modify(), modifyResponse(), abort(). */
  afterLlm(fn: StageHandler<LlmResponse>): this;
  /** `hook.before_tool`: continue_(), modify(), modifyArguments(), respond(), deny(), ask(), allow(), abort(). */
  beforeTool(fn: StageHandler<ToolCall, Decision | LifecycleAnswer>): this;
  /** `hook.after_tool`: continue_(), modify(), modifyResult(), abort(). */
  afterTool(fn: StageHandler<ToolOutput, Decision | LifecycleAnswer>): this;
  /** `hook.approve_tool`: approve(), refuse(reason) or abstain() (also what nothing means). */
  approveTool(fn: StageHandler<ToolCall>): this;
  /** `hook.lifecycle` for these request events: block(), context(), systemMessage(), summary(), a string (context). */
  lifecycle(
    events: LifecycleRequestEvent | LifecycleRequestEvent[],
    fn: StageHandler<LifecycleEvent, LifecycleAnswer | Decision | string>,
  ): this;
  /** Observe runtime events matching a pattern (`*`, `prefix.*` or a kind), one at a time, in order. */
  onEvent(patterns: string | string[], fn: (event: RuntimeEvent) => void | Promise<void>): this;
  /** The hello answer: exactly the registered stages and patterns. */
  helloResult(): { name: string; version: 1; intercept: Stage[]; observe: string[] };
  /** Serve until stdin closes or SIGTERM/SIGINT; stdout carries protocol lines only meanwhile. */
  serve(options?: {
    input?: NodeLikeReadable;
    output?: { write(line: string): unknown };
    protectStdout?: boolean;
  }): Promise<void>;
  /** Serve on stdin/stdout, then exit with status 0. */
  run(): Promise<never>;
}

/** The part of a Node readable stream serve() uses. */
export interface NodeLikeReadable {
  on(event: "data", listener: (chunk: Uint8Array) => void): unknown;
  off(event: "data", listener: (chunk: Uint8Array) => void): unknown;
  once(event: "end" | "error", listener: () => void): unknown;
  pause(): unknown;
  resume(): unknown;
}

/** Let the params pass unchanged (nothing returned means the same); at approve_tool it is abstain(). */
export declare function continue_(): Decision;
/** Rewrite the params with a JSON merge patch over them; `null` deletes a member. */
export declare function modify(patch: JsonObject): Decision;
/** before_tool: merge `changes` into the call's arguments. */
export declare function modifyArguments(changes: JsonObject): Decision;
/** after_tool: change fields of the tool result. */
export declare function modifyResult(fields: Partial<ToolResult>): Decision;
/** after_llm: change fields of the model's answer. */
export declare function modifyResponse(fields: JsonObject): Decision;
/** before_tool: answer in place of the tool, with its text for the model or a whole tool result. */
export declare function respond(forLlm: string, options?: { forUser?: string; silent?: boolean; isError?: boolean }): Decision;
export declare function respond(result: ToolResult): Decision;
/** before_tool: do not run the tool; `reason` reaches the model. */
export declare function deny(reason: string): Decision;
/** before_tool: let the user decide; `reason` is shown to them. */
export declare function ask(reason?: string): Decision;
/** before_tool: approve the call (the agent may run it without asking), with an optional patch. */
export declare function allow(reason?: string | null, call?: JsonObject): Decision;
/** End the turn, or with `{hard: true}` the whole agent loop. */
export declare function abort(reason?: string | null, options?: { hard?: boolean }): Decision;
/** approve_tool: let the tool run. */
export declare function approve(reason?: string): Decision;
/** approve_tool: do not let the tool run; `reason` reaches the model. */
export declare function refuse(reason: string): Decision;
/** approve_tool: do not decide; the agent decides as with no hook. */
export declare function abstain(): Decision;
/** lifecycle: stop the event (at stop/subagent_stop: keep going, `reason` is the next instruction). */
export declare function block(reason?: string): LifecycleAnswer;
/** lifecycle: context for the model; alone at before_tool/after_tool, continue with context. */
export declare function context(text: string): LifecycleAnswer;
/** lifecycle: a message shown to the user. */
export declare function systemMessage(text: string): LifecycleAnswer;
/** lifecycle (before_compaction): the summary the agent uses in place of its own. */
export declare function summary(text: string): LifecycleAnswer;
/** lifecycle: every member at once. */
export declare function lifecycleResult(members: {
  block?: boolean;
  reason?: string | null;
  additionalContext?: string | null;
  systemMessage?: string | null;
  summary?: string | null;
}): LifecycleAnswer;

/** A handler's answer as the result object sent to the host; throws IllegalResult when the stage forbids it. */
export declare function toWire(stage: Stage, answer: unknown, event?: string): JsonObject;
/** Throws ProtocolError unless `params` fit `method` (`hook.before_tool`, ...). */
export declare function checkParams(method: string, params: unknown): void;
/** Decode a stage result as the host does; throws ProtocolError with the reason when the host would reject it. */
export declare function decodeResult(stage: Stage, value: unknown, event?: string): JsonObject;

/** JSON Merge Patch (RFC 7386), the meaning of `modify`. */
export declare namespace mergePatch {
  /** `target` with `patch` applied; neither is changed. */
  function apply(target: Json | undefined, patch: Json): Json;
  /** The smallest merge patch that turns `before` into `after`. */
  function diff(before: JsonObject, after: JsonObject): JsonObject;
}
