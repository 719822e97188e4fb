#!/usr/bin/env node
// before_tool: rewrite a bare `ls` to `ls -h`, the smallest useful rewrite.
//
// The answer is a merge patch of the call's arguments, so any other argument
// (say `cwd`) and any other hook's rewrite survive.

import { Hook, modifyArguments } from "@hookhost/sdk";

const SHELL_TOOLS = new Set(["shell", "bash", "Bash", "exec"]);

new Hook("ls_human")
  .beforeTool((call) => {
    const command = call.arguments.command;
    if (SHELL_TOOLS.has(call.tool) && typeof command === "string" && command.trim() === "ls") {
      return modifyArguments({ command: "ls -h" });
    }
    return undefined;
  })
  .run();
