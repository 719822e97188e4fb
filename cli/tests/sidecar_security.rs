//! `hookhost serve --listen` as an attacker on the same machine meets it:
//! a browser page (an `Origin`), a DNS-rebinding page (a foreign `Host`),
//! a local process without the token, frame headers announcing what never
//! arrives, unmasked frames, oversized messages whole and in fragments,
//! idle connections, and a flood of large requests. Each test drives the
//! real binary over a raw TCP socket, so the client sends exactly the
//! bytes an attacker would.

#![allow(clippy::unwrap_used)]

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use common::{HOOKHOST, TEST_HOOK};
const BUILTINS: &str = "[hooks.builtins.deny_tools]\n\
    config = { tools = [\"shell\"], reason = \"no shell here\" }\n";

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hookhost-sec-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A config file in a fresh folder.
fn config(name: &str, text: &str) -> PathBuf {
    let path = scratch(name).join("hooks.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn serve(config: &Path, extra: &[&str]) -> (Child, String) {
    common::serve_listen(config, extra)
}

fn stop(mut child: Child) {
    // SAFETY: a signal to the sidecar this test started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "exit {status:?}");
}

/// Sends an upgrade request with `Host: <addr>` unless `headers` gives
/// one; returns the socket and the response's status and head.
fn upgrade(addr: &str, headers: &[(&str, &str)]) -> (TcpStream, u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut req = String::from("GET / HTTP/1.1\r\n");
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        req += &format!("Host: {addr}\r\n");
    }
    req += "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\
            Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";
    for (n, v) in headers {
        req += &format!("{n}: {v}\r\n");
    }
    req += "\r\n";
    s.write_all(req.as_bytes()).unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if s.read(&mut byte).unwrap() == 0 {
            break;
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (s, status, head)
}

/// A client frame: masked unless `masked` is false.
fn frame(opcode: u8, fin: bool, payload: &[u8], masked: bool) -> Vec<u8> {
    let mut out = vec![(u8::from(fin) << 7) | opcode];
    let bit = if masked { 0x80 } else { 0 };
    header_len(&mut out, bit, payload.len() as u64);
    if masked {
        let mask = [0x12, 0x34, 0x56, 0x78];
        out.extend_from_slice(&mask);
        out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    } else {
        out.extend_from_slice(payload);
    }
    out
}

fn header_len(out: &mut Vec<u8>, bit: u8, len: u64) {
    if len < 126 {
        out.push(bit | len as u8);
    } else if len <= 0xffff {
        out.push(bit | 126);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(bit | 127);
        out.extend_from_slice(&len.to_be_bytes());
    }
}

/// The next server frame: (opcode, payload).
fn read_frame(s: &mut TcpStream) -> (u8, Vec<u8>) {
    let mut two = [0u8; 2];
    s.read_exact(&mut two).unwrap();
    let len = match two[1] & 0x7f {
        126 => {
            let mut b = [0u8; 2];
            s.read_exact(&mut b).unwrap();
            u64::from(u16::from_be_bytes(b))
        }
        127 => {
            let mut b = [0u8; 8];
            s.read_exact(&mut b).unwrap();
            u64::from_be_bytes(b)
        }
        n => u64::from(n),
    };
    let mut payload = vec![0u8; len as usize];
    s.read_exact(&mut payload).unwrap();
    (two[0] & 0x0f, payload)
}

fn read_json(s: &mut TcpStream) -> Value {
    let (op, payload) = read_frame(s);
    assert_eq!(op, 1, "a text frame: {}", String::from_utf8_lossy(&payload));
    serde_json::from_slice(&payload).unwrap()
}

fn before_tool(id: u64, tool: &str) -> Vec<u8> {
    let m = json!({"jsonrpc": "2.0", "id": id, "method": "host.before_tool",
        "params": {"tool": tool, "arguments": {"command": "ls"}}});
    frame(1, true, m.to_string().as_bytes(), true)
}

/// A session that still works: shell is denied by the builtin.
fn assert_served(s: &mut TcpStream, id: u64) {
    s.write_all(&before_tool(id, "shell")).unwrap();
    let answer = read_json(s);
    assert_eq!(answer["id"], id);
    assert_eq!(answer["result"]["action"], "deny_tool", "{answer}");
}

fn vm_hwm_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[test]
fn a_cross_origin_upgrade_is_refused_unless_listed() {
    let cfg = config("origin", BUILTINS);
    let (child, addr) = serve(&cfg, &["--allow-origin", "https://app.example"]);
    let (_s, status, head) = upgrade(&addr, &[("Origin", "https://evil.example")]);
    assert_eq!(status, 403, "{head}");
    let (_s, status, _) = upgrade(&addr, &[("Origin", "null")]);
    assert_eq!(status, 403, "a sandboxed page's null origin");
    let (mut s, status, head) = upgrade(&addr, &[("Origin", "https://app.example")]);
    assert_eq!(status, 101, "a listed origin: {head}");
    assert_served(&mut s, 1);
    let (mut s, status, _) = upgrade(&addr, &[]);
    assert_eq!(status, 101, "a native agent sends no Origin");
    assert_served(&mut s, 2);
    stop(child);
}

#[test]
fn a_rebinding_host_is_refused_on_loopback() {
    let cfg = config("host", BUILTINS);
    let (child, addr) = serve(&cfg, &[]);
    let port = addr.rsplit(':').next().unwrap();
    let evil = format!("evil.example:{port}");
    let (_s, status, _) = upgrade(&addr, &[("Host", &evil)]);
    assert_eq!(status, 403);
    let local = format!("localhost:{port}");
    let (mut s, status, _) = upgrade(&addr, &[("Host", &local)]);
    assert_eq!(status, 101);
    assert_served(&mut s, 1);
    stop(child);
}

#[test]
fn with_a_token_file_only_the_token_holder_is_served() {
    let cfg = config("token", BUILTINS);
    let token_file = cfg.with_file_name("token");
    std::fs::write(&token_file, "  correct-horse-battery\n").unwrap();
    let (child, addr) = serve(&cfg, &["--token-file", token_file.to_str().unwrap()]);
    let (_s, status, head) = upgrade(&addr, &[]);
    assert_eq!(status, 401, "{head}");
    assert!(head.contains("WWW-Authenticate: Bearer"), "{head}");
    let (_s, status, _) = upgrade(&addr, &[("Authorization", "Bearer correct-horse")]);
    assert_eq!(status, 401, "a prefix of the token");
    let (_s, status, _) = upgrade(&addr, &[("Authorization", "Basic correct-horse-battery")]);
    assert_eq!(status, 401, "another scheme");
    let (mut s, status, _) = upgrade(&addr, &[("Authorization", "Bearer correct-horse-battery")]);
    assert_eq!(status, 101);
    assert_served(&mut s, 1);
    stop(child);
}

#[test]
fn token_and_address_errors_stop_serve_before_it_listens() {
    let cfg = config("start", BUILTINS);
    let empty = cfg.with_file_name("empty");
    std::fs::write(&empty, "\n").unwrap();
    let cases: [(&[&str], &str); 3] = [
        (&["--listen", "0.0.0.0:0"], "--token-file"),
        (
            &[
                "--listen",
                "127.0.0.1:0",
                "--token-file",
                "/nonexistent/token",
            ],
            "cannot read",
        ),
        (
            &[
                "--listen",
                "127.0.0.1:0",
                "--token-file",
                empty.to_str().unwrap(),
            ],
            "empty",
        ),
    ];
    for (args, says) in cases {
        let out = Command::new(HOOKHOST)
            .args(["serve", "-c", cfg.to_str().unwrap()])
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "nothing listened: {args:?}");
    }
}

#[test]
fn oversized_frame_headers_do_not_grow_memory() {
    let cfg = config("headers", BUILTINS);
    let (child, addr) = serve(&cfg, &[]);
    let before = vm_hwm_kib(child.id());
    let mut held = Vec::new();
    for i in 0..100 {
        let (mut s, status, _) = upgrade(&addr, &[]);
        assert_eq!(status, 101);
        // 14 bytes announcing a 16 MiB text frame (half of them just over
        // the message limit), then nothing.
        let len = (16u64 << 20) + (i % 2);
        let mut head = vec![0x81];
        header_len(&mut head, 0x80, len);
        head.extend_from_slice(&[1, 2, 3, 4]);
        assert_eq!(head.len(), 14);
        s.write_all(&head).unwrap();
        held.push(s);
    }
    std::thread::sleep(Duration::from_millis(500));
    let (mut s, _, _) = upgrade(&addr, &[]);
    assert_served(&mut s, 1);
    let grown = vm_hwm_kib(child.id()).saturating_sub(before);
    assert!(
        grown < 64 * 1024,
        "peak RSS grew by {grown} KiB for 1,400 bytes sent"
    );
    drop(held);
    stop(child);
}

#[test]
fn an_unmasked_client_frame_closes_the_connection_with_1002() {
    let cfg = config("unmasked", BUILTINS);
    let (child, addr) = serve(&cfg, &[]);
    let (mut s, _, _) = upgrade(&addr, &[]);
    let m = json!({"jsonrpc": "2.0", "id": 1, "method": "host.stats"});
    s.write_all(&frame(1, true, m.to_string().as_bytes(), false))
        .unwrap();
    let (op, payload) = read_frame(&mut s);
    assert_eq!(op, 8, "a close frame");
    assert_eq!(u16::from_be_bytes([payload[0], payload[1]]), 1002);
    stop(child);
}

#[test]
fn an_oversized_message_is_answered_and_the_session_goes_on() {
    let cfg = config("oversized", BUILTINS);
    let (child, addr) = serve(&cfg, &[]);
    let (mut s, _, _) = upgrade(&addr, &[]);
    // One frame one byte over the limit.
    let big = vec![b' '; (16 << 20) + 1];
    s.write_all(&frame(1, true, &big, true)).unwrap();
    let e = read_json(&mut s);
    assert_eq!(e["error"]["code"], -32600, "{e}");
    assert_eq!(e["id"], Value::Null);
    assert_served(&mut s, 1);
    // Seventeen 1 MiB fragments, then a request in the same session.
    let part = vec![b' '; 1 << 20];
    s.write_all(&frame(1, false, &part, true)).unwrap();
    for _ in 0..15 {
        s.write_all(&frame(0, false, &part, true)).unwrap();
    }
    s.write_all(&frame(0, true, &part, true)).unwrap();
    let e = read_json(&mut s);
    assert_eq!(e["error"]["code"], -32600, "{e}");
    assert_served(&mut s, 2);
    stop(child);
}

#[test]
fn fragments_and_pings_are_served() {
    let cfg = config("fragments", BUILTINS);
    let (child, addr) = serve(&cfg, &[]);
    let (mut s, _, _) = upgrade(&addr, &[]);
    let m = json!({"jsonrpc": "2.0", "id": 7, "method": "host.before_tool",
        "params": {"tool": "shell", "arguments": {"command": "ls"}}})
    .to_string();
    let (a, b) = m.as_bytes().split_at(10);
    s.write_all(&frame(1, false, a, true)).unwrap();
    s.write_all(&frame(9, true, b"are you there", true))
        .unwrap();
    s.write_all(&frame(0, true, b, true)).unwrap();
    let (op, payload) = read_frame(&mut s);
    assert_eq!(
        (op, payload.as_slice()),
        (10, &b"are you there"[..]),
        "the pong"
    );
    assert_eq!(read_json(&mut s)["result"]["action"], "deny_tool");
    stop(child);
}

#[test]
fn an_idle_connection_is_closed_with_1001() {
    let cfg = config("idle", BUILTINS);
    let (child, addr) = serve(&cfg, &["--idle-timeout", "1"]);
    let (mut s, _, _) = upgrade(&addr, &[]);
    assert_served(&mut s, 1);
    let begun = Instant::now();
    let (op, payload) = read_frame(&mut s);
    assert_eq!(op, 8);
    assert_eq!(u16::from_be_bytes([payload[0], payload[1]]), 1001);
    assert!(begun.elapsed() >= Duration::from_millis(900));
    stop(child);
}

#[test]
fn a_slow_request_is_not_idle() {
    let cfg = config(
        "slow",
        &format!(
            "[hooks.processes.slow]\ncommand = [{TEST_HOOK:?}, \"--sleep-ms\", \"2500\"]\n\
             intercept = [\"before_tool\"]\n"
        ),
    );
    let (child, addr) = serve(&cfg, &["--idle-timeout", "1"]);
    let (mut s, _, _) = upgrade(&addr, &[]);
    s.write_all(&before_tool(1, "web")).unwrap();
    let answer = read_json(&mut s);
    assert_eq!(
        answer["id"], 1,
        "answered after 2.5 s, past the idle timeout: {answer}"
    );
    stop(child);
}

/// The bytes one session may hold in flight are bounded: with a hook that
/// takes 20 s per call, hookhost reads 8 MiB requests until 64 MiB are in
/// flight, then stops reading, so the agent's writes block. Without the
/// bound it read all 30 (240 MiB of text, and as much again as parsed
/// values and lines queued to the hook).
#[test]
fn large_requests_in_flight_are_bounded_by_bytes() {
    let cfg = config(
        "bytes",
        &format!(
            "[hooks.processes.slow]\ncommand = [{TEST_HOOK:?}, \"--sleep-ms\", \"20000\"]\n\
             intercept = [\"after_tool\"]\ntimeout_ms = 60000\n\
             [hooks.defaults]\nchain_budget_ms = 60000\n"
        ),
    );
    let (child, addr) = serve(&cfg, &[]);
    let (mut s, _, _) = upgrade(&addr, &[]);
    let m = json!({"jsonrpc": "2.0", "id": 1, "method": "host.after_tool",
        "params": {"tool": "web", "arguments": {}, "result": {"for_llm": "x".repeat(8 << 20)}}});
    let request = frame(1, true, m.to_string().as_bytes(), true);
    let written = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let writer = {
        let written = written.clone();
        std::thread::spawn(move || {
            for _ in 0..30 {
                if s.write_all(&request).is_err() {
                    return;
                }
                written.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        })
    };
    // Wait until the writes stop making progress for 3 s (well before the
    // hook's first answer at 20 s), or all 30 are taken.
    let (mut last, mut still) = (0, Instant::now());
    while still.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(200));
        let now = written.load(std::sync::atomic::Ordering::SeqCst);
        if now == 30 {
            break;
        }
        if now != last {
            (last, still) = (now, Instant::now());
        }
    }
    let taken = written.load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        (8..=11).contains(&taken),
        "{taken} requests of 8 MiB were taken before hookhost stopped reading"
    );
    stop(child);
    let _ = writer.join();
}

/// `serve` under `prlimit`, with its address.
fn serve_limited(config: &Path, nofile: &str) -> (Child, String) {
    let limit = format!("--nofile={nofile}");
    common::serve_listen_under(&["prlimit", &limit], config, &[])
}

/// The soft descriptor limit is raised to the hard one at start, so a
/// connection flood does not leave command hooks unable to spawn at the
/// usual soft limit of 1024.
#[test]
fn the_descriptor_limit_is_raised_to_the_hard_limit() {
    let cfg = config("nofile", BUILTINS);
    let (child, _addr) = serve_limited(&cfg, "256:4096");
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", child.id())).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    let fields: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(&fields[3..5], ["4096", "4096"], "{line}");
    stop(child);
}

/// With few descriptors the connection cap shrinks to leave room for the
/// hooks: connections past it are closed at once, the ones in it are
/// served, and the refusals are logged once, with a count, not per
/// connection.
#[test]
fn the_connection_cap_leaves_room_for_hooks_and_refusals_are_logged_within_a_budget() {
    let cfg = config("cap", BUILTINS);
    // 150 descriptors, 136 kept for one hook: 14 connections.
    let (child, addr) = serve_limited(&cfg, "150:150");
    let mut open = Vec::new();
    for _ in 0..14 {
        let (s, status, _) = upgrade(&addr, &[]);
        assert_eq!(status, 101);
        open.push(s);
    }
    for _ in 0..40 {
        let mut s = TcpStream::connect(&addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut byte = [0u8; 1];
        match s.read(&mut byte) {
            Ok(0) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            other => panic!("not closed at once: {other:?}"),
        }
    }
    assert_served(&mut open[13], 1);
    // SAFETY: a signal to the sidecar this test started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let refusals = stderr.matches("refused a connection").count();
    assert_eq!(refusals, 1, "{stderr}");
}

/// A TCP connection to `addr` from the local address `from` (any of
/// 127.0.0.0/8 is this machine).
fn connect_from(from: [u8; 4], addr: &str) -> TcpStream {
    use std::os::fd::FromRawFd;
    let to: std::net::SocketAddrV4 = addr.parse().unwrap();
    let sockaddr = |ip: [u8; 4], port: u16| libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(ip),
        },
        sin_zero: [0; 8],
    };
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: a fresh socket, bound and connected with sockaddr_in values
    // this function owns; the descriptor is handed to a TcpStream.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0);
        let local = sockaddr(from, 0);
        assert_eq!(libc::bind(fd, (&raw const local).cast(), len), 0);
        let remote = sockaddr(to.ip().octets(), to.port());
        assert_eq!(libc::connect(fd, (&raw const remote).cast(), len), 0);
        TcpStream::from_raw_fd(fd)
    }
}

/// Five loopback source addresses used to fill all 1024 places (256
/// each), and every hook call was reset. Now every loopback address is one
/// peer, and a connection that has not passed admission (here: no token)
/// holds only a small pending place, given to the next newcomer: the
/// agent's session opened before the flood is still served, and a new one
/// is admitted during it.
#[test]
fn a_loopback_flood_without_the_token_cannot_starve_the_agents_that_have_it() {
    let cfg = config("flood", BUILTINS);
    let token_file = cfg.with_file_name("token");
    std::fs::write(&token_file, "flood-token\n").unwrap();
    let (child, addr) = serve(&cfg, &["--token-file", token_file.to_str().unwrap()]);
    let auth = [("Authorization", "Bearer flood-token")];
    let (mut before, status, _) = upgrade(&addr, &auth);
    assert_eq!(status, 101);
    let mut flood = Vec::new();
    for host in 2..=6u8 {
        for _ in 0..256 {
            flood.push(connect_from([127, 0, 0, host], &addr));
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    assert_served(&mut before, 1);
    let (mut during, status, head) = upgrade(&addr, &auth);
    assert_eq!(status, 101, "{head}");
    assert_served(&mut during, 2);
    drop(flood);
    stop(child);
}

/// A text message that is not UTF-8 fails the connection with 1007 (RFC
/// 6455 section 8.1); it used to be answered -32700 as if it were JSON.
#[test]
fn invalid_utf8_in_a_text_message_closes_the_connection_with_1007() {
    let cfg = config("utf8", BUILTINS);
    let (child, addr) = serve(&cfg, &[]);
    let (mut s, _, _) = upgrade(&addr, &[]);
    s.write_all(&frame(
        1,
        true,
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"x\":\"\xff\xfe\"}",
        true,
    ))
    .unwrap();
    let (op, payload) = read_frame(&mut s);
    assert_eq!(op, 8, "a close frame, not an answer: {payload:?}");
    assert_eq!(u16::from_be_bytes([payload[0], payload[1]]), 1007);
    stop(child);
}
