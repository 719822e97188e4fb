//! `hookhost unit`: the systemd user unit that runs the user's daemon,
//! printed, or written where `systemctl --user` finds it.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use crate::shared::exit::usage_error;
use crate::shared::paths;

/// The address agents' HTTP hooks are pointed at by `hookhost install`.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7070";

/// Print (or write) a systemd user unit that runs `hookhost serve` as the
/// user's daemon.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
hookhost unit                 # print it\n  \
hookhost unit --write && systemctl --user daemon-reload && systemctl --user enable --now hookhost\n\n\
Without systemd, run the daemon in the foreground instead:\n  \
hookhost serve --socket --listen 127.0.0.1:7070")]
pub struct UnitArgs {
    /// The config the daemon serves (default ~/.config/hookhost/hooks.toml).
    #[arg(short = 'c', long = "config")]
    config: Option<PathBuf>,
    /// Where the daemon also serves agents' HTTP hooks.
    #[arg(long, value_name = "ADDR", default_value = DEFAULT_LISTEN)]
    listen: SocketAddr,
    /// Write it to ~/.config/systemd/user/hookhost.service.
    #[arg(long)]
    write: bool,
}

pub fn run(args: UnitArgs) -> ExitCode {
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => return usage_error(format!("unit: cannot find this binary: {e}")),
    };
    let config = args.config.unwrap_or_else(paths::default_config);
    let config = std::path::absolute(&config).unwrap_or(config);
    let text = unit(&exe, &config, args.listen);
    if !args.write {
        out!("{text}");
        return ExitCode::SUCCESS;
    }
    let path = paths::xdg_config_home().join("systemd/user/hookhost.service");
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&path, text));
    if let Err(e) = written {
        eprintln!("hookhost: unit: cannot write {}: {e}", path.display());
        return ExitCode::from(1);
    }
    outln!("wrote {}", path.display());
    outln!("now: systemctl --user daemon-reload && systemctl --user enable --now hookhost");
    ExitCode::SUCCESS
}

/// The unit's text. Paths are quoted for systemd, whose ExecStart splits
/// on spaces and expands `%`.
fn unit(exe: &Path, config: &Path, listen: SocketAddr) -> String {
    let quote = |p: &Path| {
        let escaped = p
            .display()
            .to_string()
            .replace('"', "\\\"")
            .replace('%', "%%");
        format!("\"{escaped}\"")
    };
    format!(
        "[Unit]\n\
         Description=hookhost: warm, composed, fail-closed hooks for this user's agents\n\n\
         [Service]\n\
         Type=simple\n\
         ExecStart={} serve -c {} --socket --listen {listen}\n\
         ExecReload=/bin/kill -HUP $MAINPID\n\
         Restart=on-failure\n\
         RestartSec=1\n\n\
         [Install]\n\
         WantedBy=default.target\n",
        quote(exe),
        quote(config)
    )
}
