// Types of @hookhost/sdk/testing: drive a real hook process from a test.

/** The hook answered a call with a JSON-RPC error. */
export declare class HookError extends Error {
  readonly code: number | undefined;
}

/** A JSON-RPC message the hook wrote. */
export type WireMessage = { jsonrpc: string; id?: unknown; result?: any; error?: { code: number; message: string } };

/** A hook process speaking the protocol over pipes, as the host would drive it. */
export declare class HookProcess {
  constructor(argv: string[], options?: { cwd?: string; env?: Record<string, string>; timeout?: number });
  /** Start `argv` and perform the hello (unless `hello: false`). */
  static start(
    argv: string[],
    options?: { cwd?: string; env?: Record<string, string>; timeout?: number; hello?: boolean },
  ): Promise<HookProcess>;
  /** Every JSON message read from stdout, in order. */
  readonly messages: WireMessage[];
  /** Every stdout line that was not JSON (should stay empty: stdout is the wire). */
  readonly garbage: string[];
  /** Everything the hook wrote to stderr so far. */
  readonly stderr: string;
  /** The hello result, after start(). */
  readonly helloResult: any;
  /** The child process. */
  readonly proc: { pid?: number; kill(signal?: string): boolean };
  /** Resolves with the exit status (or the signal's name). */
  readonly exited: Promise<number | string>;
  /** Write one raw line (a newline is added). */
  sendLine(line: string): void;
  /** Send a request; resolves with the whole response message. */
  request(method: string, params: unknown, id?: string | number): Promise<WireMessage>;
  /** Call `hook.<stage>`; resolves with its result, rejects with HookError on an error answer. */
  call(stage: string, params: unknown): Promise<any>;
  /** Send a notification. */
  notify(method: string, params: unknown): void;
  /** Close stdin; resolves with the exit status. */
  close(): Promise<number | string>;
}
