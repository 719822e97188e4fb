//! A hook's `main`: pick the transport from the command line and serve.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::hook::Hook;

/// Runs `hook` as a whole hook process. This is what a hook's `main`
/// usually is.
///
/// Without arguments it serves the host over stdin and stdout
/// ([`crate::serve_stdio`]), which is how the host starts a hook. With
/// `--listen ADDR` (or `--listen=ADDR`) it serves as a network service
/// instead, WebSocket and HTTP on one port (`serve_ws`, crate feature
/// `ws`; spec §2.2): once bound it prints one line, `listening on
/// ws://HOST:PORT` with the port it got (port 0 picks a free one), to
/// stdout, then points stdout at stderr as the stdio mode does, so that
/// whoever started it can read the address and nothing else; it serves
/// until SIGTERM or SIGINT, then stops gracefully and returns `Ok`. So
/// every hook built on `run` can be a process or a service without a line
/// of its own code. Other arguments are left to the hook.
///
/// With `--listen`, `--token-file PATH` (or `--token-file=PATH`) requires
/// every request and upgrade to carry `Authorization: Bearer TOKEN`, where
/// TOKEN is the file's content with surrounding whitespace trimmed
/// (`NetConfig::token_file`). Requests from
/// web pages (with an `Origin` header) are refused either way; see
/// `serve_ws_with`.
///
/// It builds a single-threaded tokio runtime. A single thread keeps a
/// round trip free of cross-thread wake-ups, which is most of the latency
/// of a small hook, and over the network it is what keeps runtime events in
/// order; requests are still served concurrently (one task each). A hook
/// with CPU-heavy handlers that wants several cores should build its own
/// multi-threaded runtime and call [`crate::serve_stdio`].
///
/// # Errors
///
/// As [`crate::serve_stdio`] or `serve_ws`; when the runtime cannot be
/// built; when `--listen` has no address, or the crate was built without
/// its `ws` feature; when `--token-file` has no path, comes without
/// `--listen`, or names a file that cannot be read or is empty. These
/// usage errors are [`io::ErrorKind::InvalidInput`] (an unreadable file
/// keeps the kind of its read error), with a message naming the flag.
pub fn run<H: Hook>(hook: H) -> io::Result<()> {
    let options = options(std::env::args_os().skip(1))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let result = match options.listen {
        None => rt.block_on(crate::serve_stdio(hook)),
        Some(addr) => rt.block_on(listen(hook, &addr, options.token_file.as_deref())),
    };
    // A blocking read on a non-pipe stdin may still be parked on a pool
    // thread; do not wait for it.
    rt.shutdown_timeout(Duration::from_millis(100));
    result
}

#[cfg(feature = "ws")]
async fn listen<H: Hook>(hook: H, addr: &str, token_file: Option<&Path>) -> io::Result<()> {
    let config = match token_file {
        Some(path) => crate::NetConfig::new().token_file(path)?,
        None => crate::NetConfig::new(),
    };
    crate::net::listen_until_signal(hook, addr, config).await
}

#[cfg(not(feature = "ws"))]
async fn listen<H: Hook>(hook: H, addr: &str, _token_file: Option<&Path>) -> io::Result<()> {
    drop(hook);
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        format!(
            "--listen {addr}: serving over WebSocket and HTTP needs hookhost-sdk's `ws` feature; \
             build the hook with `hookhost-sdk = {{ features = [\"ws\"] }}`"
        ),
    ))
}

/// What `run` reads from the command line.
#[derive(Debug, Default, PartialEq)]
struct Options {
    /// `--listen ADDR` or `--listen=ADDR`.
    listen: Option<String>,
    /// `--token-file PATH` or `--token-file=PATH`.
    token_file: Option<PathBuf>,
}

/// The flags `run` knows, wherever they are; other arguments are left to
/// the hook. The last of a repeated flag wins, as with most tools.
fn options(args: impl Iterator<Item = OsString>) -> io::Result<Options> {
    let mut args = args;
    let mut found = Options::default();
    while let Some(arg) = args.next() {
        if let Some(value) = flag(&arg, "--listen", &mut args) {
            let value = value.and_then(|v| v.into_string().ok());
            found.listen =
                Some(value.ok_or_else(|| {
                    usage("--listen needs an address, e.g. --listen 127.0.0.1:8700")
                })?);
        } else if let Some(value) = flag(&arg, "--token-file", &mut args) {
            found.token_file = Some(PathBuf::from(value.ok_or_else(|| {
                usage("--token-file needs the path of a file holding the token")
            })?));
        }
    }
    if found.token_file.is_some() && found.listen.is_none() {
        return Err(usage(
            "--token-file goes with --listen ADDR: over stdio there is no token to check",
        ));
    }
    Ok(found)
}

/// When `arg` is the flag `name`: its value (`--name VALUE` or
/// `--name=VALUE`), `None` when it has none.
fn flag(
    arg: &OsString,
    name: &str,
    rest: &mut impl Iterator<Item = OsString>,
) -> Option<Option<OsString>> {
    let value = if arg == name {
        rest.next()
    } else {
        let inline = arg.to_str()?.strip_prefix(name)?.strip_prefix('=')?;
        Some(OsString::from(inline))
    };
    Some(value.filter(|v| !v.is_empty() && !v.to_string_lossy().starts_with("--")))
}

fn usage(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> io::Result<Options> {
        options(args.iter().map(OsString::from))
    }

    fn listen_of(args: &[&str]) -> Option<String> {
        parse(args).unwrap().listen
    }

    #[test]
    fn listen_takes_its_address_in_either_spelling() {
        assert_eq!(parse(&[]).unwrap(), Options::default());
        assert_eq!(listen_of(&["--verbose"]), None);
        assert_eq!(
            listen_of(&["--listen", "127.0.0.1:0"]).as_deref(),
            Some("127.0.0.1:0")
        );
        assert_eq!(
            listen_of(&["-v", "--listen=[::1]:8700"]).as_deref(),
            Some("[::1]:8700")
        );
        assert_eq!(
            listen_of(&["--listen=a:1", "--listen", "b:2"]).as_deref(),
            Some("b:2"),
            "the last one wins, as with most tools"
        );
        assert_eq!(listen_of(&["--listener=x"]), None, "another flag");
    }

    #[test]
    fn listen_without_an_address_is_an_error() {
        for args in [&["--listen"][..], &["--listen="], &["--listen", "--other"]] {
            let err = parse(args).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{args:?}");
            assert!(err.to_string().contains("needs an address"), "{err}");
        }
    }

    #[test]
    fn token_file_takes_its_path_in_either_spelling() {
        for args in [
            &["--listen", "a:1", "--token-file", "/run/t"][..],
            &["--token-file=/run/t", "--listen=a:1"],
        ] {
            let options = parse(args).unwrap();
            assert_eq!(options.token_file, Some(PathBuf::from("/run/t")));
            assert_eq!(options.listen.as_deref(), Some("a:1"));
        }
    }

    #[test]
    fn token_file_without_a_path_or_without_listen_is_an_error() {
        for (args, says) in [
            (&["--listen", "a:1", "--token-file"][..], "needs the path"),
            (&["--listen", "a:1", "--token-file="], "needs the path"),
            (&["--token-file", "/run/t"], "goes with --listen"),
        ] {
            let err = parse(args).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{args:?}");
            assert!(err.to_string().contains(says), "{err}");
        }
    }

    #[cfg(not(feature = "ws"))]
    #[test]
    fn listen_without_the_ws_feature_says_so() {
        struct Nothing;
        impl Hook for Nothing {
            fn intercepts(&self) -> Vec<crate::Stage> {
                Vec::new()
            }
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let err = rt
            .block_on(listen(Nothing, "127.0.0.1:0", None))
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::Unsupported);
        assert!(err.to_string().contains("`ws` feature"), "{err}");
    }
}
