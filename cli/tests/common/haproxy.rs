//! A real HAProxy (Debian's package, which scripts/test installs) in
//! front of a gateway's replicas: HTTP mode, round robin per request,
//! at most 128 connections per replica (the rest wait in its queue), a
//! request whose replica died before answering sent again to another
//! (`retry-on`: an event answered twice is decided twice, the same way),
//! health checks every 200 ms, and the replica that answered named in
//! `X-Served-By`.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Haproxy {
    pub port: u16,
    dir: PathBuf,
    child: Child,
}

impl Haproxy {
    /// Balances over `servers` (name, port), all on loopback.
    pub fn start(name: &str, servers: &[(String, u16)]) -> Haproxy {
        let dir = crate::common::fresh_dir("haproxy", name);
        let port = crate::common::free_port();
        let mut conf = format!(
            "global\n  maxconn 8192\n\
             defaults\n  mode http\n  timeout connect 1s\n  timeout client 60s\n  timeout server 15s\n  timeout queue 10s\n  retries 2\n  option redispatch\n  retry-on conn-failure empty-response junk-response\n\
             frontend fe\n  bind 127.0.0.1:{port}\n  default_backend replicas\n\
             backend replicas\n  balance roundrobin\n  http-reuse always\n  http-response set-header X-Served-By %[srv_name]\n"
        );
        for (name, port) in servers {
            // Below a replica's own limit of connections (256): past it the
            // balancer queues rather than have connections refused.
            conf += &format!(
                "  server {name} 127.0.0.1:{port} maxconn 128 check inter 200ms fall 2 rise 2\n"
            );
        }
        let path = dir.join("haproxy.cfg");
        std::fs::write(&path, conf).unwrap();
        let child = Command::new("haproxy")
            .arg("-f")
            .arg(&path)
            .arg("-db")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("haproxy.log")).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("haproxy: {e} (scripts/test installs Debian's haproxy)"));
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "haproxy did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Haproxy { port, dir, child }
    }
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
