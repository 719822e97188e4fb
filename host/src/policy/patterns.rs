//! The regexes of `if` expressions' `matches()`, compiled once. cel's own
//! `matches` compiles its pattern on every call (about 100 µs a pattern,
//! 47× a `startsWith` filter); here a pattern written as a constant is
//! compiled when the config loads (a bad one is a load error) and kept for
//! the life of the process, and any other pattern (one an expression
//! builds from the call) is kept in a bounded cache.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard};

use regex::Regex;

/// Patterns built at run time kept at once; past it the cache starts
/// afresh. They come from the call (an argument, a tool name), so the bound
/// keeps a caller from growing the host's memory.
const MAX_BUILT: usize = 256;

/// The compiled patterns: the config's constants, never dropped, and the
/// ones built at run time, bounded.
#[derive(Default)]
struct Patterns {
    constant: HashMap<String, Arc<Regex>>,
    built: HashMap<String, Arc<Regex>>,
}

/// Read by every `matches()` call at once (a read lock: calls on many
/// threads do not wait on each other), written on a miss only.
fn patterns() -> &'static RwLock<Patterns> {
    static PATTERNS: OnceLock<RwLock<Patterns>> = OnceLock::new();
    PATTERNS.get_or_init(RwLock::default)
}

fn read() -> RwLockReadGuard<'static, Patterns> {
    patterns().read().unwrap_or_else(|p| p.into_inner())
}

fn lock() -> RwLockWriteGuard<'static, Patterns> {
    patterns().write().unwrap_or_else(|p| p.into_inner())
}

/// Compiles a constant pattern of a config's `if`, at load: the error is
/// the config's.
pub(super) fn pin(pattern: &str) -> Result<(), regex::Error> {
    if read().constant.contains_key(pattern) {
        return Ok(());
    }
    let compiled = Arc::new(Regex::new(pattern)?);
    lock().constant.insert(pattern.to_string(), compiled);
    Ok(())
}

/// The compiled `pattern`: a constant's, or one compiled now and kept.
pub(super) fn get(pattern: &str) -> Result<Arc<Regex>, regex::Error> {
    {
        let held = read();
        if let Some(r) = held
            .constant
            .get(pattern)
            .or_else(|| held.built.get(pattern))
        {
            return Ok(Arc::clone(r));
        }
    }
    // Compiled outside the lock: a slow pattern does not hold up others.
    let compiled = Arc::new(Regex::new(pattern)?);
    let mut held = lock();
    if held.built.len() >= MAX_BUILT {
        held.built.clear();
    }
    held.built
        .insert(pattern.to_string(), Arc::clone(&compiled));
    Ok(compiled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_is_compiled_once_and_a_bad_one_is_an_error() {
        pin("^rm -rf").expect("valid");
        let a = get("^rm -rf").expect("pinned");
        let b = get("^rm -rf").expect("pinned");
        assert!(Arc::ptr_eq(&a, &b), "the same compiled regex");
        assert!(pin("(").is_err());
        assert!(get("(").is_err());
    }

    #[test]
    fn patterns_built_at_run_time_are_bounded() {
        for i in 0..(MAX_BUILT * 3) {
            get(&format!("^built-{i}$")).expect("valid");
        }
        assert!(read().built.len() <= MAX_BUILT);
    }
}
