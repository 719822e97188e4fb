// JSON Merge Patch (RFC 7386), the meaning of `modify`.
//
// A hook never has to apply a patch: the host does. These are here because
// hooks often want to reason about one: apply() shows what the next hook will
// see, and diff() turns "the whole object as I want it" into the smallest
// patch, which composes better with other hooks' rewrites.

const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

/** `target` with `patch` applied; neither argument is changed. */
export function apply(target, patch) {
  if (!isObject(patch)) return structuredClone(patch);
  const result = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = apply(result[key], value);
  }
  return result;
}

/**
 * The smallest merge patch that turns `before` into `after`. Removed members
 * become null. A member whose new value is null cannot be expressed (null
 * always deletes), so it is deleted instead.
 */
export function diff(before, after) {
  const patch = {};
  for (const key of Object.keys(before)) {
    if (!Object.hasOwn(after, key)) patch[key] = null;
  }
  for (const [key, value] of Object.entries(after)) {
    const had = Object.hasOwn(before, key);
    const old = before[key];
    if (had && same(old, value)) continue;
    patch[key] = had && isObject(value) && isObject(old) ? diff(old, value) : structuredClone(value);
  }
  return patch;
}

function same(a, b) {
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && same(a[k], b[k]));
  }
  return a === b;
}
