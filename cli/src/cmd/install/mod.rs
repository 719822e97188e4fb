//! `hookhost install AGENT` and `hookhost uninstall AGENT`: route every
//! hook event of an agent to hookhost by writing entries into the agent's
//! own settings file, and take them out again.
//!
//! The entries merge with what the file holds (other keys and hooks stay
//! where they were), replace hookhost's earlier entries in place (so a
//! second install changes nothing), and are recognised by what they run
//! (`hookhost relay --dialect D`) or where they post (`…/hooks/D`). Every
//! file is backed up before it is written; `--dry-run` shows the diffs.
//! One module per concern: [`target`] (which file), [`route`] (which
//! entry), [`shape`] (the JSON edit), [`adopt`] (moving the user's hooks
//! into hookhost), [`file`] and [`plan`] (writing safely); [`init`] writes a
//! first config and names the agents whose hooks `--adopt` would move.

mod adopt;
mod file;
mod init;
pub(crate) mod managed;
mod plan;
pub(crate) mod route;
mod shape;
mod target;
pub(crate) mod tomljson;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use hookhost::Dialect;
use serde_json::Value;

use crate::shared::exit::usage_error;
use crate::shared::paths;
use file::Doc;
use plan::Step;
use route::{Route, Via};
use target::{Scope, Shape};

pub use init::{InitArgs, init};

/// Where a daemon serves Claude Code's http hooks unless told otherwise.
const DEFAULT_URL: &str = "http://127.0.0.1:7070";

/// What `--dry-run` shows in place of a token not created yet.
const TOKEN_PLACEHOLDER: &str = "<the token install creates>";

/// Route an agent's hook events to hookhost, in the agent's own settings.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
hookhost install claude-code                       # ~/.claude/settings.json, runs hookhost relay\n  \
hookhost install codex --scope project --dry-run   # show the diff of .codex/hooks.json\n  \
hookhost install cursor --adopt                    # move your Cursor hooks into hookhost's chain\n  \
hookhost install claude-code --via http            # http hooks to 127.0.0.1:7070, with a token\n  \
hookhost install codex --managed --url https://hooks.corp  # /etc/codex/requirements.toml\n\n\
Each event gets one entry running `hookhost relay --dialect D`, which forwards to the daemon \
(`hookhost serve --socket`) on its Unix socket and takes an answer only from a daemon of your \
own user. With --via http (Claude Code, user scope only) the entries post to the daemon's TCP \
port instead; any local process that binds that port first would answer every hook, so the \
daemon requires a per-user token (~/.config/hookhost/http-token, created 0600) that install \
writes into the settings as an Authorization header (the settings file is then 0600), and \
`hookhost status` warns when another user holds the port. Where hookhost can refuse, a \
hookhost that cannot be reached refuses (Claude Code `onFailure: \"block\"`, Cursor \
`failClosed`, relay `--unreachable deny`) unless --no-fail-closed.")]
pub struct InstallArgs {
    /// The agent: claude-code, codex, gemini-cli, cursor or copilot.
    #[arg(value_parser = target::parse_agent)]
    agent: Dialect,
    #[command(flatten)]
    place: Place,
    /// How the agent reaches hookhost: `relay` (a command per event over
    /// the daemon's Unix socket; the default) or `http` (Claude Code at
    /// user scope only: posts to the daemon's TCP port with its token).
    #[arg(long, value_enum)]
    via: Option<ViaArg>,
    /// The base URL of hookhost's HTTP listener, for --via http (the
    /// route `/hooks/<agent>` is added; default http://127.0.0.1:7070).
    #[arg(long)]
    url: Option<String>,
    /// Let the agent go on when hookhost cannot be reached.
    #[arg(long)]
    no_fail_closed: bool,
    /// Move your own hooks from the agent's file into hookhost's chain.
    #[arg(long)]
    adopt: bool,
    /// The hookhost config that imports adopted hooks (default:
    /// ~/.config/hookhost/hooks.toml); created if missing.
    #[arg(short = 'c', long = "config")]
    config: Option<PathBuf>,
    /// Print the changes as a diff and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Write the agent's managed tier (the admin's file under /etc, which
    /// no user file overrides) routing every event to the gateway at
    /// --url: see `hookhost doctor` to check it is live.
    #[arg(long, requires = "url", conflicts_with_all = ["via", "adopt", "no_fail_closed", "config"])]
    managed: bool,
    /// With --managed: write under this folder instead of `/` (an image
    /// being built, a test).
    #[arg(long, requires = "managed", value_name = "DIR")]
    root: Option<PathBuf>,
}

/// Take hookhost's entries out of an agent's settings file.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
hookhost uninstall claude-code\n  \
hookhost uninstall gemini-cli --scope project --dry-run\n\n\
Removes exactly the entries install wrote (recognised by `hookhost relay --dialect D` or a \
URL ending in /hooks/D); everything else in the file stays. Hooks that `install --adopt` moved \
into hookhost go back into the agent's file (each event's after what it still holds), their \
adopted file is removed and the config no longer imports it, unless --keep-adopted.")]
pub struct UninstallArgs {
    /// The agent: claude-code, codex, gemini-cli, cursor or copilot.
    #[arg(value_parser = target::parse_agent)]
    agent: Dialect,
    #[command(flatten)]
    place: Place,
    /// The hookhost config that imports the adopted hooks (default:
    /// ~/.config/hookhost/hooks.toml).
    #[arg(short = 'c', long = "config")]
    config: Option<PathBuf>,
    /// Leave the hooks `--adopt` moved into hookhost where they are (they
    /// then run only where hookhost still runs for another agent).
    #[arg(long)]
    keep_adopted: bool,
    /// Print the changes as a diff and write nothing.
    #[arg(long)]
    dry_run: bool,
}

/// Which settings file: the scope and, at project scope, the project.
#[derive(Args)]
struct Place {
    /// `user` (every project) or `project` (one project's settings).
    #[arg(long, value_enum, default_value = "user")]
    scope: Scope,
    /// The project folder, for --scope project (default: the current one).
    #[arg(long)]
    project: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ViaArg {
    Http,
    Relay,
}

/// Runs `hookhost install`: 0 done, 2 with the reason on stderr.
pub async fn install(args: InstallArgs) -> ExitCode {
    outcome(run_install(&args))
}

/// Runs `hookhost uninstall`: 0 done, 2 with the reason on stderr.
pub async fn uninstall(args: UninstallArgs) -> ExitCode {
    outcome(run_uninstall(&args))
}

fn outcome(result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => usage_error(e),
    }
}

fn run_install(args: &InstallArgs) -> Result<(), String> {
    if args.managed {
        return run_managed(args);
    }
    let agent = args.agent;
    let (scope, project) = place(&args.place)?;
    let file = target::settings_file(agent, scope, &project);
    if scope == Scope::Project {
        target::refuse_links(&project, &file)?;
        if args.adopt {
            target::refuse_links(&project, &adopt::adopted_file(agent, scope, &project))?;
        }
    }
    let via = via(args, scope)?;
    let config = args.config.clone().unwrap_or_else(paths::default_config);
    refuse_self_import(&config, &file)?;
    let routes = route::routes(agent, &via, !args.no_fail_closed);
    let mut doc = Doc::load(&file)?;
    if doc.before.is_none() && Shape::of(agent) == Shape::Flat {
        doc.root.insert("version".into(), Value::from(1));
    }
    let mut steps = Vec::new();
    if args.adopt {
        steps = adoption(agent, scope, &project, &config, &mut doc)?;
    }
    let tally = shape::install(&mut doc.root, Shape::of(agent), agent, &routes)
        .map_err(|m| format!("{}: {m}", file.display()))?;
    if doc.changed() {
        let mut step = Step::of(&doc, routed(&routes, tally));
        if matches!(via, Via::Http { .. }) {
            // The settings hold the daemon's token: the user's eyes only.
            step.mode = Some(0o600);
        }
        steps.push(step);
    } else {
        outln!(
            "{}: hookhost is already installed here; nothing changed",
            file.display()
        );
    }
    finish(&steps, args.dry_run)?;
    if let Via::Relay(program) = &via {
        warn_if_cached(program);
    }
    if !args.dry_run {
        if let Via::Http { url, .. } = &via {
            record_http_port(url);
        }
        remind(agent, scope, &via, args.config.as_deref());
    }
    Ok(())
}

/// `install --managed`: the agent's managed file under `--root` (or `/`).
fn run_managed(args: &InstallArgs) -> Result<(), String> {
    if args.place.scope != Scope::User || args.place.project.is_some() {
        return Err("--managed writes the machine's managed tier, not a scope's file".into());
    }
    let base = args.url.as_deref().unwrap_or(DEFAULT_URL);
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        return Err(format!("--url {base}: expected https://HOST[:PORT]"));
    }
    let root = args.root.clone().unwrap_or_else(|| PathBuf::from("/"));
    let file = managed::managed_file(args.agent, &root)?;
    let program = relay_program()?;
    match managed::step(args.agent, &file, base, &program)? {
        Some(step) => finish(&[step], args.dry_run)?,
        None => outln!(
            "{}: already routes to {base}; nothing changed",
            file.display()
        ),
    }
    if !args.dry_run {
        outln!(
            "note: every user's agent sends ${} as its token: set it in their environment \
             (`hookhost doctor {}` checks the route)",
            managed::TOKEN_VAR,
            args.agent
        );
    }
    Ok(())
}

fn run_uninstall(args: &UninstallArgs) -> Result<(), String> {
    let agent = args.agent;
    let (scope, project) = place(&args.place)?;
    let file = target::settings_file(agent, scope, &project);
    if scope == Scope::Project {
        target::refuse_links(&project, &file)?;
    }
    let mut doc = Doc::load(&file)?;
    let removed = shape::uninstall(&mut doc.root, Shape::of(agent), agent)
        .map_err(|m| format!("{}: {m}", file.display()))?;
    let adopted = adopt::adopted_file(agent, scope, &project);
    let config = args.config.clone().unwrap_or_else(paths::default_config);
    let restored = match args.keep_adopted {
        true => Vec::new(),
        false => adopt::restore(agent, &adopted, &config, &mut doc)?,
    };
    if removed == 0 && restored.is_empty() {
        outln!("{}: no hookhost entries; nothing changed", file.display());
        return Ok(());
    }
    let mut note = format!("removed hookhost from {removed} events");
    if !restored.is_empty() {
        note.push_str(&format!(
            "; the hooks adopted into {} are back",
            adopted.display()
        ));
    }
    let mut step = Step::of(&doc, note);
    if holds_nothing(&doc) {
        step.after = None;
        step.note
            .push_str("; the file held nothing else, so it is removed");
    }
    let mut steps = vec![step];
    steps.extend(restored);
    finish(&steps, args.dry_run)?;
    if args.keep_adopted && adopted.exists() {
        outln!(
            "note: the hooks adopted from here ({}) run only through hookhost; {agent} no longer \
             calls it, so they no longer run (uninstall without --keep-adopted puts them back)",
            adopted.display()
        );
    }
    Ok(())
}

/// Shows or makes the steps.
fn finish(steps: &[Step], dry_run: bool) -> Result<(), String> {
    if dry_run {
        plan::show(steps);
        Ok(())
    } else {
        plan::apply(steps)
    }
}

/// The scope, and the project folder (absolute; the current folder when
/// not given, and unused at user scope).
fn place(place: &Place) -> Result<(Scope, PathBuf), String> {
    if place.project.is_some() && place.scope != Scope::Project {
        return Err("--project goes with --scope project".into());
    }
    let dir = match &place.project {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|e| format!("no current folder: {e}"))?,
    };
    let dir = dir
        .canonicalize()
        .map_err(|e| format!("project folder {}: {e}", dir.display()))?;
    Ok((place.scope, dir))
}

/// How this agent will reach hookhost: the relay unless `--via http`,
/// which only Claude Code has, and only at user scope (a project's
/// settings are often committed, and would carry the token).
fn via(args: &InstallArgs, scope: Scope) -> Result<Via, String> {
    let http = args.via == Some(ViaArg::Http);
    if http && args.agent != Dialect::ClaudeCode {
        return Err(format!(
            "{} runs only command hooks; use --via relay (its default)",
            args.agent
        ));
    }
    if http && scope == Scope::Project {
        return Err(
            "--via http writes the daemon's token into the settings, and a project's \
             settings are often committed: use --via relay (the default), or --scope user"
                .into(),
        );
    }
    if http {
        let base = args.url.as_deref().unwrap_or(DEFAULT_URL);
        let url = hook_url(base, args.agent)?;
        let token = http_token(args.dry_run)?;
        return Ok(Via::Http {
            url,
            token,
            env: None,
        });
    }
    if args.url.is_some() {
        return Err("--url goes with --via http".into());
    }
    relay_program().map(Via::Relay)
}

/// The daemon's per-user token, created (0600) when missing; a dry run
/// creates nothing and shows a placeholder instead.
fn http_token(dry_run: bool) -> Result<String, String> {
    let path = paths::default_token_file();
    if dry_run && !path.exists() {
        return Ok(TOKEN_PLACEHOLDER.into());
    }
    paths::ensure_token(&path)
}

/// Notes the address the agent's http hooks post to, so `hookhost status`
/// can warn when another user's process holds that port.
fn record_http_port(url: &str) {
    let Some(addr) = url_addr(url) else {
        return;
    };
    let path = paths::http_listen_file();
    if let Err(e) = std::fs::write(&path, format!("{addr}\n")) {
        outln!("note: cannot write {}: {e}", path.display());
    }
}

/// `HOST:PORT` of an `http://HOST:PORT/...` URL.
fn url_addr(url: &str) -> Option<&str> {
    url.split("://").nth(1).and_then(|r| r.split('/').next())
}

/// `base` with the agent's route, `/hooks/<agent>`.
fn hook_url(base: &str, agent: Dialect) -> Result<String, String> {
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        return Err(format!("--url {base}: expected http://HOST:PORT"));
    }
    let base = base.trim_end_matches('/');
    let route = format!("/hooks/{agent}");
    Ok(match base.ends_with(&route) {
        true => base.to_string(),
        false => format!("{base}{route}"),
    })
}

/// This binary's absolute path, quoted for `sh`: what the relay entries
/// run. It must be called `hookhost`, the name uninstall looks for.
fn relay_program() -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    if exe.file_name().is_none_or(|n| n != "hookhost") {
        return Err(format!(
            "this binary is {}; install writes its path into the agent's settings and \
             recognises its entries by the name `hookhost`: run it under that name",
            exe.display()
        ));
    }
    let path = exe
        .to_str()
        .ok_or_else(|| format!("{}: not a UTF-8 path", exe.display()))?;
    Ok(route::quote(path))
}

/// Warns when the relay entries name a binary in a one-off runner's cache:
/// `npx` and `uvx` run a package from a cache that `npm cache clean` or
/// `uv cache clean` (or their own pruning) empties, taking the path install
/// wrote with it.
fn warn_if_cached(program: &str) {
    let runner = if program.contains("/_npx/") {
        "npx"
    } else if program.contains("/archive-v0/") {
        "uvx"
    } else {
        return;
    };
    outln!(
        "warning: this hookhost runs from {runner}'s cache, which can be cleared: the agent's \
         hooks would then fail (closed where they refuse). Install it to stay (npm install -g \
         hookhost, uv tool install hookhost) and run install again"
    );
}

/// A hookhost config that imports the very file install writes would run
/// hookhost's own entries as hooks: each event would call hookhost again.
fn refuse_self_import(config: &Path, file: &Path) -> Result<(), String> {
    let Ok(loaded) = hookhost::Config::load(config) else {
        return Ok(());
    };
    let same = |p: &Path| p == file || p.canonicalize().ok() == file.canonicalize().ok();
    let imported = loaded
        .commands
        .values()
        .any(|c| c.source.as_ref().is_some_and(|s| same(&s.file)));
    if imported {
        return Err(format!(
            "{} imports {} ([hooks.import]); with hookhost's entries in it, hookhost would call \
             itself at every event. Remove it from [hooks.import] first (--adopt moves its \
             hooks into a file of their own)",
            config.display(),
            file.display()
        ));
    }
    Ok(())
}

/// The line about the settings file after an install.
fn routed(routes: &[Route], tally: shape::Tally) -> String {
    let closed = routes.iter().filter(|r| r.closed).count();
    let mut note = format!(
        "routed {} events to hookhost ({} added, {} updated",
        routes.len(),
        tally.added,
        tally.updated
    );
    if tally.removed > 0 {
        note.push_str(&format!(", {} old ones removed", tally.removed));
    }
    note.push_str(&format!("; failing closed at {closed})"));
    note
}

/// Whether an uninstalled file is left with nothing of its own: `{}`, or
/// Cursor's and Copilot's `{"version": 1}` alone.
fn holds_nothing(doc: &Doc) -> bool {
    doc.root.keys().all(|k| k == "version")
}

/// `--adopt`: the steps that move the user's hooks out of the agent's
/// files (`doc` is edited; Copilot's other files get steps of their own)
/// into the adopted file, imported by the config.
fn adoption(
    agent: Dialect,
    scope: Scope,
    project: &Path,
    config: &Path,
    doc: &mut Doc,
) -> Result<Vec<Step>, String> {
    let adopted = adopt::adopted_file(agent, scope, project);
    let (moved, sources) = take_adoptable(agent, scope, &adopted, doc)?;
    if moved.is_empty() {
        outln!("no hooks to adopt");
        return Ok(Vec::new());
    }
    let mut steps = adopted_steps(agent, config, &adopted, &moved)?;
    steps.extend(sources);
    adoption_notes(scope, &adopted);
    Ok(steps)
}

/// Takes the hooks that can move out of every file `--adopt` reads, and
/// says which stay. Returns them, and the steps for files other than
/// `doc` (Copilot's own hook files).
fn take_adoptable(
    agent: Dialect,
    scope: Scope,
    adopted: &Path,
    doc: &mut Doc,
) -> Result<(shape::Taken, Vec<Step>), String> {
    let mut moved = Vec::new();
    let mut steps = Vec::new();
    for source in target::adopt_sources(agent, &doc.path)? {
        let mut other = match source == doc.path {
            true => None,
            false => Some(Doc::load(&source)?),
        };
        let root = other.as_mut().map_or(&mut doc.root, |d| &mut d.root);
        let (taken, left) = adopt::take(root, &source, agent, scope)?;
        for l in left {
            let file = l.file.display();
            outln!("left in {file}: {} `{}`: {}", l.event, l.what, l.why);
        }
        if let Some(other) = other.filter(|_| !taken.is_empty()) {
            let n = shape::count(&taken, Shape::of(agent));
            steps.push(Step::of(
                &other,
                format!("moved {n} hooks to {}", adopted.display()),
            ));
        }
        moved.extend(taken);
    }
    Ok((moved, steps))
}

/// The adopted file with `moved` appended, and the config importing it.
fn adopted_steps(
    agent: Dialect,
    config: &Path,
    adopted: &Path,
    moved: &shape::Taken,
) -> Result<Vec<Step>, String> {
    let shape = Shape::of(agent);
    let mut doc = Doc::load(adopted)?;
    if doc.before.is_none() && shape == Shape::Flat {
        doc.root.insert("version".into(), Value::from(1));
    }
    shape::append(&mut doc.root, moved).map_err(|m| format!("{}: {m}", adopted.display()))?;
    let n = shape::count(moved, shape);
    let mut steps = vec![Step::of(&doc, format!("holds {n} adopted hooks"))];
    let before = match std::fs::read_to_string(config) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read {}: {e}", config.display())),
    };
    let base = config.parent().unwrap_or(Path::new("."));
    let imported = adopt::import(before.as_deref(), base, agent, adopted)
        .map_err(|m| format!("{}: {m}", config.display()))?;
    if let Some(after) = imported {
        steps.push(Step {
            path: config.to_path_buf(),
            before,
            after: Some(after),
            note: format!("imports {} ([hooks.import])", adopted.display()),
            check_config: true,
            mode: None,
        });
    }
    Ok(steps)
}

/// What changes for adopted hooks, said once.
fn adoption_notes(scope: Scope, adopted: &Path) {
    let dir = match scope {
        Scope::Project => "the project folder".to_string(),
        Scope::User => adopted
            .parent()
            .map_or_else(String::new, |d| d.display().to_string()),
    };
    outln!(
        "note: adopted hooks run in hookhost, in {dir}, with PATH and the agent's project \
         variables only; a hook script that reads other variables behaves differently"
    );
    if scope == Scope::Project {
        outln!(
            "note: hookhost runs one chain for every session it serves, so these project hooks \
             also run for sessions of other projects"
        );
    }
}

/// What must run for the entries to answer, and what the agent will ask.
fn remind(agent: Dialect, scope: Scope, via: &Via, config: Option<&Path>) {
    let c = config.map_or_else(String::new, |c| format!(" -c {}", c.display()));
    match via {
        Via::Http { url, .. } => {
            let addr = url_addr(url).unwrap_or("127.0.0.1:7070");
            outln!("now keep running: hookhost serve{c} --socket --listen {addr}");
            outln!(
                "note: the daemon requires the token in {} (the settings send it); any local \
                 process that binds {addr} first would receive your hooks' events, so \
                 `hookhost status` warns when another user holds it",
                paths::default_token_file().display()
            );
        }
        // Only a managed install routes to a gateway; it says its own.
        Via::Gateway { .. } => {}
        Via::Relay(_) => outln!(
            "now keep running: hookhost serve{c} --socket (the relay connects to {})",
            paths::default_socket().display()
        ),
    }
    match (agent, scope) {
        (Dialect::Codex, _) => outln!(
            "note: Codex runs new hooks once you trust them: review them with /hooks in codex"
        ),
        (Dialect::GeminiCli, Scope::Project) => {
            outln!("note: Gemini CLI asks you to trust a project's hooks before it runs them")
        }
        _ => {}
    }
    if scope == Scope::Project {
        outln!(
            "note: a project's settings are often committed; its entries name this machine's \
             hookhost, which teammates may not have"
        );
    }
}
