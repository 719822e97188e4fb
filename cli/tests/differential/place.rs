//! Where one run of one case happens (a HOME, a project, a private
//! runtime folder), how a user sets hookhost up there (`install --adopt`,
//! `trust approve`, the daemon), and a bounded run of the agent.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;

/// How long one agent session may take before it is killed.
const SESSION_LIMIT: Duration = Duration::from_secs(60);

/// The folders of one run.
pub struct Place {
    /// The scratch folder everything is under (normalised away).
    pub dir: PathBuf,
    pub home: PathBuf,
    pub project: PathBuf,
    /// `XDG_RUNTIME_DIR`: the daemon's socket folder.
    pub runtime: PathBuf,
}

impl Place {
    pub fn new() -> Place {
        let dir = common::scratch().canonicalize().unwrap();
        let p = Place {
            home: dir.join("home"),
            project: dir.join("project"),
            runtime: dir.join("run"),
            dir,
        };
        for d in [&p.home, &p.project, &p.runtime, &p.home.join(".config")] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::set_permissions(&p.runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
        p
    }

    /// The environment every command of this run gets (agent, hookhost
    /// and daemon alike): only what a user's login gives.
    pub fn env(&self, cmd: &mut Command) {
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("USER", "tester")
            .env("LANG", "C.UTF-8")
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_RUNTIME_DIR", &self.runtime);
    }

    /// `hookhost ARGS` in the project, which must succeed; its stdout.
    pub fn hookhost(&self, args: &[&str]) -> String {
        let mut cmd = Command::new(common::HOOKHOST);
        self.env(&mut cmd);
        let out = cmd.args(args).current_dir(&self.project).output().unwrap();
        common::succeeded(args, &out)
    }

    /// hookhost as the user sets it up for `agent`'s project hooks:
    /// `install AGENT --scope project --adopt`, `imports` added to the
    /// config's `[hooks.import]` (a plugin's hooks), every project hook
    /// approved, and the daemon started (it stops when the guard drops).
    pub fn set_up_hookhost(&self, agent: &str, imports: &[PathBuf]) -> Daemon {
        let project = self.project.to_str().unwrap();
        self.hookhost(&[
            "install",
            agent,
            "--scope",
            "project",
            "--project",
            project,
            "--adopt",
        ]);
        let config = self.home.join(".config/hookhost/hooks.toml");
        if !config.exists() {
            // Nothing was adopted (every hook stayed with the agent): the
            // user's config is still empty.
            std::fs::create_dir_all(config.parent().unwrap()).unwrap();
            std::fs::write(&config, "").unwrap();
        }
        if !imports.is_empty() {
            let text = std::fs::read_to_string(&config).unwrap_or_default();
            let list: Vec<String> = imports.iter().map(|p| p.display().to_string()).collect();
            let extra = format!("\n[hooks.import]\n\"{agent}\" = {list:?}\n");
            std::fs::create_dir_all(config.parent().unwrap()).unwrap();
            std::fs::write(&config, merge_import(&text, &extra)).unwrap();
        }
        self.hookhost(&["trust", "approve", "--all"]);
        self.daemon()
    }

    fn daemon(&self) -> Daemon {
        let mut cmd = Command::new(common::HOOKHOST);
        self.env(&mut cmd);
        let log = std::fs::File::create(self.dir.join("daemon.log")).unwrap();
        let child = cmd
            .args(["serve", "--socket", "--no-watch"])
            .current_dir(&self.home)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let socket = self.runtime.join("hookhost/hookhost.sock");
        let begun = Instant::now();
        while !socket.exists() && begun.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(10));
        }
        let daemon = Daemon(child);
        assert!(
            socket.exists(),
            "the daemon made no socket: {}",
            std::fs::read_to_string(self.dir.join("daemon.log")).unwrap_or_default()
        );
        daemon
    }
}

/// Adds `extra` (a `[hooks.import]` table) to a config that may have one:
/// its keys go under the existing table.
fn merge_import(text: &str, extra: &str) -> String {
    match text.find("[hooks.import]\n") {
        Some(at) => {
            let body = extra.trim_start().trim_start_matches("[hooks.import]\n");
            let end = at + "[hooks.import]\n".len();
            format!("{}{body}{}", &text[..end], &text[end..])
        }
        None => format!("{text}{extra}"),
    }
}

/// The daemon of one run; killed when dropped.
pub struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs `cmd` as [`common::run_bounded`] does, for [`SESSION_LIMIT`].
pub fn run_bounded(cmd: Command, dir: &Path) -> common::Ran {
    common::run_bounded(cmd, dir, SESSION_LIMIT)
}
