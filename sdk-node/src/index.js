// @hookhost/sdk: write hookhost hooks in a few lines of JavaScript or TypeScript.
//
//   import { Hook, deny } from "@hookhost/sdk";
//
//   new Hook("guard")
//     .beforeTool((call) => {
//       if (String(call.arguments.command ?? "").startsWith("sudo ")) return deny("no sudo");
//     })
//     .run();
//
// See README.md for every handler, helper and guarantee.

export { Hook, PROTOCOL_VERSION } from "./hook.js";
export {
  Decision, IllegalResult, LifecycleAnswer, abort, abstain, allow, approve, ask, block, context, continue_, deny,
  lifecycleResult, modify, modifyArguments, modifyResponse, modifyResult, refuse, respond, summary, systemMessage,
  toWire,
} from "./results.js";
export { ProtocolError, STAGES, checkParams, decodeResult } from "./schema.js";
export * as mergePatch from "./merge-patch.js";
