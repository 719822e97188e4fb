//! A hook's `main`: pick the transport from the command line and serve.

use std::ffi::OsString;
use std::io;
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
/// its `ws` feature.
pub fn run<H: Hook>(hook: H) -> io::Result<()> {
    let address = listen_address(std::env::args_os().skip(1))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let result = match address {
        None => rt.block_on(crate::serve_stdio(hook)),
        Some(addr) => rt.block_on(listen(hook, &addr)),
    };
    // A blocking read on a non-pipe stdin may still be parked on a pool
    // thread; do not wait for it.
    rt.shutdown_timeout(Duration::from_millis(100));
    result
}

#[cfg(feature = "ws")]
async fn listen<H: Hook>(hook: H, addr: &str) -> io::Result<()> {
    crate::net::listen_until_signal(hook, addr).await
}

#[cfg(not(feature = "ws"))]
async fn listen<H: Hook>(hook: H, addr: &str) -> io::Result<()> {
    drop(hook);
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        format!(
            "--listen {addr}: serving over WebSocket and HTTP needs hookhost-sdk's `ws` feature; \
             build the hook with `hookhost-sdk = {{ features = [\"ws\"] }}`"
        ),
    ))
}

/// The address of `--listen ADDR` or `--listen=ADDR`, if given.
fn listen_address(args: impl Iterator<Item = OsString>) -> io::Result<Option<String>> {
    let mut args = args;
    let mut found = None;
    while let Some(arg) = args.next() {
        let value = if arg == "--listen" {
            args.next()
        } else if let Some(v) = arg.to_str().and_then(|a| a.strip_prefix("--listen=")) {
            Some(OsString::from(v))
        } else {
            continue;
        };
        let value = value
            .and_then(|v| v.into_string().ok())
            .filter(|v| !v.is_empty() && !v.starts_with("--"));
        match value {
            Some(v) => found = Some(v),
            None => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "--listen needs an address, e.g. --listen 127.0.0.1:8700",
                ));
            }
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> io::Result<Option<String>> {
        listen_address(args.iter().map(OsString::from))
    }

    #[test]
    fn listen_takes_its_address_in_either_spelling() {
        assert_eq!(parse(&[]).unwrap(), None);
        assert_eq!(parse(&["--verbose"]).unwrap(), None);
        assert_eq!(
            parse(&["--listen", "127.0.0.1:0"]).unwrap().as_deref(),
            Some("127.0.0.1:0")
        );
        assert_eq!(
            parse(&["-v", "--listen=[::1]:8700"]).unwrap().as_deref(),
            Some("[::1]:8700")
        );
        assert_eq!(
            parse(&["--listen=a:1", "--listen", "b:2"])
                .unwrap()
                .as_deref(),
            Some("b:2"),
            "the last one wins, as with most tools"
        );
    }

    #[test]
    fn listen_without_an_address_is_an_error() {
        for args in [&["--listen"][..], &["--listen="], &["--listen", "--other"]] {
            let err = parse(args).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{args:?}");
            assert!(err.to_string().contains("needs an address"), "{err}");
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
        let err = rt.block_on(listen(Nothing, "127.0.0.1:0")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::Unsupported);
        assert!(err.to_string().contains("`ws` feature"), "{err}");
    }
}
