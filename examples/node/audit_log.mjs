#!/usr/bin/env node
// Observe every `agent.*` runtime event and append it as one JSON line to the
// file named by AUDIT_LOG_FILE, written per line so a crash loses nothing.
//
// Event handlers run one at a time in arrival order, so lines keep the order
// the agent emitted them in.

import { appendFileSync } from "node:fs";
import { Hook } from "@hookhost/sdk";

const PATH = process.env.AUDIT_LOG_FILE ?? "";
if (!PATH) console.error("audit_log: AUDIT_LOG_FILE is not set; events will not be recorded");

new Hook("audit_log")
  .onEvent("agent.*", (event) => {
    // Appended on use, so a start alone creates no file.
    if (PATH) appendFileSync(PATH, `${JSON.stringify(event)}\n`, "utf8");
  })
  .run();
