//! A real PostgreSQL server for the tests (Debian's `postgresql` package,
//! which scripts/test installs): a fresh cluster in a scratch folder,
//! trusting local connections, on a free loopback port. Under root it runs
//! as the `postgres` user, since the server refuses root.

#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Postgres {
    pub dir: PathBuf,
    pub port: u16,
    bin: PathBuf,
    child: Option<Child>,
}

/// The server's programs: the newest `/usr/lib/postgresql/N/bin`.
fn bin_dir() -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|dirs| dirs.flatten().map(|d| d.path().join("bin")).collect())
        .unwrap_or_default();
    found.retain(|d| d.join("postgres").exists());
    found.sort();
    found.pop().unwrap_or_else(|| {
        panic!("PostgreSQL is not installed: scripts/test installs Debian's postgresql package")
    })
}

/// `program` run as the user that owns the cluster.
fn as_owner(program: &Path) -> Command {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Command::new(program);
    }
    let mut cmd = Command::new("setpriv");
    cmd.args([
        "--reuid=postgres",
        "--regid=postgres",
        "--init-groups",
        "--",
    ])
    .arg(program);
    cmd
}

impl Postgres {
    /// A new cluster, started and accepting connections.
    pub fn start(name: &str) -> Postgres {
        let dir = crate::common::fresh_dir("pg", name);
        std::fs::create_dir_all(dir.join("data")).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            let chown = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&dir)
                .status()
                .unwrap();
            assert!(chown.success());
        }
        let bin = bin_dir();
        let out = as_owner(&bin.join("initdb"))
            .args([
                "--auth=trust",
                "-U",
                "postgres",
                "--no-sync",
                "-E",
                "UTF8",
                "-D",
            ])
            .arg(dir.join("data"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut pg = Postgres {
            dir,
            port: crate::common::free_port(),
            bin,
            child: None,
        };
        pg.run();
        pg
    }

    /// `postgres://postgres@127.0.0.1:PORT/postgres`.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    fn run(&mut self) {
        let child = as_owner(&self.bin.join("postgres"))
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(["-p", &self.port.to_string(), "-k"])
            .arg(&self.dir)
            .args([
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "fsync=off",
                "-c",
                "max_connections=200",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(self.dir.join("server.log")).unwrap())
            .spawn()
            .unwrap();
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        while postgres::Client::connect(&self.socket_url(), postgres::NoTls).is_err() {
            assert!(
                Instant::now() < deadline,
                "PostgreSQL did not start: {}",
                std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The server's Unix socket, which trusts its own machine's clients
    /// whatever TLS the TCP port requires.
    fn socket_url(&self) -> String {
        format!(
            "host={} port={} user=postgres dbname=postgres",
            self.dir.display(),
            self.port
        )
    }

    /// A client, for the test's own queries.
    pub fn client(&self) -> postgres::Client {
        postgres::Client::connect(&self.socket_url(), postgres::NoTls).unwrap()
    }

    /// Serves TLS only on the TCP port, with `cert` and `key` (PEM
    /// files), refusing plain connections there; restarts to apply.
    pub fn require_tls(&mut self, cert: &Path, key: &Path) {
        let data = self.dir.join("data");
        std::fs::copy(cert, data.join("server.crt")).unwrap();
        std::fs::copy(key, data.join("server.key")).unwrap();
        std::fs::set_permissions(
            data.join("server.key"),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            for f in ["server.crt", "server.key"] {
                let chown = Command::new("chown")
                    .arg("postgres:postgres")
                    .arg(data.join(f))
                    .status()
                    .unwrap();
                assert!(chown.success());
            }
        }
        let conf = data.join("postgresql.conf");
        let mut text = std::fs::read_to_string(&conf).unwrap();
        text += "\nssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n";
        std::fs::write(&conf, text).unwrap();
        let hba = "local all all trust\n\
                   hostssl all all 127.0.0.1/32 trust\n\
                   hostnossl all all 127.0.0.1/32 reject\n";
        std::fs::write(data.join("pg_hba.conf"), hba).unwrap();
        self.restart();
    }

    /// Stops the server (fast shutdown: clients are cut off) and waits.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SAFETY: a signal to the server this test started.
            unsafe {
                libc::kill(child.id() as i32, libc::SIGINT);
            }
            let _ = child.wait();
        }
    }

    /// Stops and starts it again on the same port and data.
    pub fn restart(&mut self) {
        self.stop();
        self.run();
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SAFETY: a signal to the server this test started; SIGQUIT
            // ends it and its backends at once.
            unsafe {
                libc::kill(child.id() as i32, libc::SIGQUIT);
            }
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
