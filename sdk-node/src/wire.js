// JSON-RPC 2.0 framing: classify one incoming line, encode one outgoing line.
//
// Free of I/O so that it can be tested line by line against the spec's
// envelope vectors. JavaScript numbers cannot hold every 64-bit id, nor tell
// `1.0` from `1`, so a numeric id is read from the line's own text: ids are
// echoed exactly (spec section 3), and a fraction or exponent is no id.

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
export const REQUEST_CANCELLED = -32800;

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;
const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Classify one line (without its newline) as the spec's section 3 does.
 * Returns `{kind, id, method, params, problem}`; `kind` is one of request,
 * notification, response, parse_error, invalid. `id` is the message's id
 * when it could be read (a number, a BigInt beyond 2^53, or a string), else null.
 */
export function classify(line) {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch (err) {
    return { kind: "parse_error", id: null, problem: `not JSON: ${err.message}` };
  }
  if (!isObject(msg)) return { kind: "invalid", id: null, problem: "a message must be a JSON object" };
  const hasId = Object.hasOwn(msg, "id");
  const id = hasId ? readId(msg.id, line) : null;
  const invalid = (problem, withId = id) => ({ kind: "invalid", id: withId, problem });
  if (msg.jsonrpc !== "2.0") return invalid('`jsonrpc` must be "2.0"');
  if (Object.hasOwn(msg, "method")) return classifyCall(msg, hasId, id, invalid);
  const hasResult = Object.hasOwn(msg, "result");
  const hasError = Object.hasOwn(msg, "error");
  if (hasResult && hasError) return invalid("a response has `result` or `error`, not both");
  if (!hasResult && !hasError) return invalid("neither `method` nor `result`/`error`");
  if (!hasId || (msg.id !== null && id === null)) return invalid("a response needs an integer or string id", null);
  if (hasError) {
    const e = msg.error;
    if (!isObject(e) || !Number.isInteger(e.code) || typeof e.message !== "string") {
      return invalid("malformed `error` object");
    }
    return { kind: "response", id };
  }
  if (msg.id === null) return invalid("only an error response may have a null id", null);
  return { kind: "response", id };
}

function classifyCall(msg, hasId, id, invalid) {
  const method = msg.method;
  if (typeof method !== "string") return invalid("`method` must be a string");
  if (Object.hasOwn(msg, "result") || Object.hasOwn(msg, "error")) {
    return invalid("a request cannot carry `result` or `error`");
  }
  let params = msg.params;
  if (params === undefined) params = {};
  else if (!isObject(params)) return invalid("`params` must be an object");
  if (!hasId) return { kind: "notification", id: null, method, params };
  if (id === null) return invalid("a request id must be an integer or a string", null);
  return { kind: "request", id, method, params };
}

/** How the host starts every request: the id without a scan. */
const HOST_PREFIX = /^\{"jsonrpc":"2\.0","id":(-?[0-9.eE+-]+)[,}]/;

/** The id as the line wrote it: a string, a safe integer, a BigInt, or null when it is no id. */
function readId(value, line) {
  if (typeof value === "string") return value;
  if (typeof value !== "number") return null;
  const raw = HOST_PREFIX.exec(line)?.[1] ?? rawTopLevel(line, "id");
  if (raw === null || !/^-?(0|[1-9]\d*)$/.test(raw)) return null;
  if (Number.isSafeInteger(value)) return value;
  const big = BigInt(raw);
  return big >= I64_MIN && big <= I64_MAX ? big : null;
}

/**
 * The raw text of the top-level member `key` of the JSON object in `text`
 * (already known to parse), or null. Walks the top level only, skipping
 * nested values, and stops at the member: the host writes `id` first.
 */
export function rawTopLevel(text, key) {
  let i = text.indexOf("{") + 1;
  let depth = 1;
  let lastKey = null;
  let expectKey = true;
  while (i < text.length && depth > 0) {
    const c = text[i];
    if (c === '"') {
      const end = stringEnd(text, i);
      if (depth === 1 && expectKey) lastKey = text.slice(i, end);
      i = end;
      continue;
    }
    if (c === ":" && depth === 1) {
      if (lastKey !== null && JSON.parse(lastKey) === key) return scalarAt(text, i + 1);
      expectKey = false;
    } else if (c === "," && depth === 1) expectKey = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
    i++;
  }
  return null;
}

function stringEnd(text, start) {
  let i = start + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
  return i + 1;
}

function scalarAt(text, start) {
  const m = /^[ \t\r\n]*([^,}\] \t\r\n]+)/.exec(text.slice(start, start + 64));
  return m ? m[1] : null;
}

function encodeId(id) {
  return typeof id === "bigint" ? id.toString() : JSON.stringify(id ?? null);
}

/**
 * One response line, newline included. Throws on values JSON cannot hold
 * (a BigInt, a cycle); JSON.stringify escapes lone surrogates, so every line
 * is valid UTF-8.
 */
export function encodeResult(id, result) {
  const body = JSON.stringify(result);
  if (body === undefined) throw new TypeError("the result is not a JSON value");
  return `{"jsonrpc":"2.0","id":${encodeId(id)},"result":${body}}\n`;
}

/** One error response line, newline included. */
export function encodeError(id, code, message) {
  return `{"jsonrpc":"2.0","id":${encodeId(id)},"error":${JSON.stringify({ code, message })}}\n`;
}
