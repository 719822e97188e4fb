//! A real Redis for the tests (Debian's `redis-server`, which scripts/test
//! installs): no persistence, on a free loopback port, stopped and
//! started again on the same port when a test restarts it.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Redis {
    pub port: u16,
    dir: PathBuf,
    child: Option<Child>,
}

impl Redis {
    pub fn start(name: &str) -> Redis {
        let dir = crate::common::fresh_dir("redis", name);
        let port = crate::common::free_port();
        let mut redis = Redis {
            port,
            dir,
            child: None,
        };
        redis.run();
        redis
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn run(&mut self) {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--dir"])
            .arg(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("redis-server: {e} (scripts/test installs Debian's redis-server)")
            });
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.command("PING") != "+PONG\r\n" {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// One inline command; the raw reply (empty when nothing answers).
    pub fn command(&self, line: &str) -> String {
        let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", self.port)) else {
            return String::new();
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
        if s.write_all(format!("{line}\r\n").as_bytes()).is_err() {
            return String::new();
        }
        let mut buf = [0u8; 4096];
        let n = s.read(&mut buf).unwrap_or(0);
        String::from_utf8_lossy(&buf[..n]).into_owned()
    }

    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    pub fn restart(&mut self) {
        self.stop();
        self.run();
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
