// Type-level tests of src/index.d.ts and src/testing.d.ts, checked by
// `tsc --noEmit` (scripts/test): what a TypeScript hook author writes must
// type-check, and the mistakes marked @ts-expect-error must not.

import {
  Hook, abort, abstain, allow, approve, ask, block, context, continue_, deny, mergePatch, modify, modifyArguments,
  modifyResponse, modifyResult, refuse, respond, summary, systemMessage, type LifecycleAnswer, type ToolCall,
} from "@hookhost/sdk";
import { HookProcess } from "@hookhost/sdk/testing";

const hook = new Hook("typed", { shutdownGrace: 200 })
  .beforeTool((call: ToolCall, { signal }) => {
    const command: unknown = call.arguments.command;
    if (signal.aborted) return undefined;
    if (call.tool === "shell" && typeof command === "string" && command.startsWith("sudo ")) return deny("no sudo");
    if (command === "ls") return modifyArguments({ command: "ls -h" });
    if (call.tool === "read_file") return allow("reads are fine");
    if (call.tool === "curl") return ask("network access");
    if (call.tool === "cached") return respond("cached", { forUser: "(cache)" });
    return continue_().withContext("note");
  })
  .afterTool(async (out) => {
    const text: string = out.result.for_llm;
    if (text.includes("secret")) return modifyResult({ for_llm: text.replace("secret", "[x]") });
    return out.result.is_error ? abort("tool failed", { hard: true }) : undefined;
  })
  .beforeLlm((req) => (req.messages.length > 100 ? abort("too long") : modify({ options: { temperature: 0 } })))
  .afterLlm((res) => modifyResponse({ content: `${res.response.content ?? ""}!` }))
  .approveTool((call) => (call.tool === "read_file" ? approve() : call.tool === "rm" ? refuse("no") : abstain()))
  .lifecycle(["session_start", "user_prompt_submit"], (ev): LifecycleAnswer | string => {
    if (ev.event === "user_prompt_submit" && String(ev.payload.prompt).includes("sk-")) return block("secret");
    return context("rules").and(systemMessage("loaded"));
  })
  .lifecycle("before_compaction", () => summary("short"))
  .onEvent(["agent.*", "lifecycle.*"], async (event) => {
    const kind: string = event.kind;
    void kind;
  });

const hello: { intercept: string[]; observe: string[] } = hook.helloResult();
const patched = mergePatch.apply({ a: 1, b: { c: 2 } }, { b: { c: null } });
const delta = mergePatch.diff({ a: 1 }, { a: 2 });
void hello;
void patched;
void delta;

// @ts-expect-error: a lifecycle handler needs request events; session_end is observe-only
hook.lifecycle("session_end", () => undefined);
// @ts-expect-error: deny needs a reason
deny();
// @ts-expect-error: a handler takes a function
hook.beforeTool("deny");
// @ts-expect-error: respond takes text or a tool result
respond(42);

async function drive(): Promise<number | string> {
  const proc = await HookProcess.start(["node", "guard.mjs"], { cwd: ".", env: { PATH: "/usr/bin" } });
  const result = await proc.call("before_tool", { tool: "shell", arguments: { command: "ls" } });
  void result;
  return proc.close();
}
void drive;
