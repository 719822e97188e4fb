//! `hookhost doctor [AGENT]`: is enforcement live? Reads the agent's
//! settings as the agent does ([`layers`], [`rules`]), says for every
//! event it can refuse whether it reaches hookhost and fails closed and
//! what could get around it ([`check`]), then sends a canary through the
//! same route ([`canary`]). Exit 0 when live on every such event, 1 when
//! not, 2 on a usage error.

mod canary;
mod check;
mod http;
mod layers;
mod owner;
mod rules;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use hookhost::Dialect;
use serde::Serialize;

use crate::cmd::install::managed::{TOKEN_VAR, managed_file};
use crate::shared::exit::usage_error;
use check::EventLine;

/// The agents doctor knows the layers of.
const AGENTS: [Dialect; 3] = [Dialect::ClaudeCode, Dialect::Codex, Dialect::GeminiCli];

/// Check that an agent's hooks reach hookhost, fail closed, and answer.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
hookhost doctor                      # each agent with a managed file here\n  \
hookhost doctor claude-code --json\n  \
hookhost doctor codex --root /mnt/image --project ~/src/app\n\n\
Reads every settings layer the agent reads (managed first), reports for each event the agent \
can refuse whether hookhost's entry runs there and refuses when hookhost cannot answer, names \
what in any layer could get around it, and sends a harmless event through the same route, \
checking on the gateway's GET /status that hookhost counted it. The token for the gateway is \
read from $HOOKHOST_TOKEN, as the agent reads it. Exit 0 when enforcement is live on every \
refusable event, 1 when not.")]
pub struct DoctorArgs {
    /// claude-code, codex or gemini-cli (default: each whose managed
    /// file exists; claude-code when none does).
    #[arg(value_parser = parse_agent)]
    agent: Option<Dialect>,
    /// Read the admin's files under this folder instead of `/`.
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// The project whose settings count (default: the current folder).
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Print the reports as JSON.
    #[arg(long)]
    json: bool,
}

fn parse_agent(s: &str) -> Result<Dialect, String> {
    let d: Dialect = s.parse().map_err(|e| format!("{e}"))?;
    match AGENTS.contains(&d) {
        true => Ok(d),
        false => Err(format!(
            "doctor knows claude-code, codex and gemini-cli, not {d}"
        )),
    }
}

/// One agent's report.
#[derive(Serialize)]
struct Report {
    agent: Dialect,
    live: bool,
    layers: Vec<LayerLine>,
    events: Vec<EventLine>,
    /// What, at every event, lets actions past hookhost or keeps its
    /// answer from counting.
    bypasses: Vec<String>,
    notes: Vec<String>,
    canary: Option<canary::Canary>,
}

#[derive(Serialize)]
struct LayerLine {
    layer: &'static str,
    path: String,
    state: String,
}

/// Runs `hookhost doctor`.
pub fn run(args: DoctorArgs) -> ExitCode {
    let root = args.root.clone().unwrap_or_else(|| PathBuf::from("/"));
    let project = match args.project.clone().map_or_else(std::env::current_dir, Ok) {
        Ok(p) => p,
        Err(e) => return usage_error(format!("no current folder: {e}")),
    };
    let reports: Vec<Report> = agents(args.agent, &root)
        .into_iter()
        .map(|a| doctor(a, &root, &project))
        .collect();
    if args.json {
        let all = serde_json::to_string_pretty(&reports).unwrap_or_default();
        outln!("{all}");
    } else {
        reports.iter().for_each(print);
    }
    match reports.iter().all(|r| r.live) {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(1),
    }
}

/// The agents to check: the one named, else those with a managed file.
fn agents(named: Option<Dialect>, root: &Path) -> Vec<Dialect> {
    if let Some(agent) = named {
        return vec![agent];
    }
    let found: Vec<Dialect> = AGENTS
        .into_iter()
        .filter(|a| managed_file(*a, root).is_ok_and(|f| f.exists()))
        .collect();
    match found.is_empty() {
        true => vec![Dialect::ClaudeCode],
        false => found,
    }
}

fn doctor(agent: Dialect, root: &Path, project: &Path) -> Report {
    let layers = layers::layers(agent, root, project);
    let rules = rules::rules(agent, &layers);
    let events = check::events(agent, &layers, &rules);
    let mut notes = rules.notes.clone();
    notes.extend(unmanaged(agent, &events));
    let mut bypasses: Vec<String> = rules.hooks_on.clone().err().into_iter().collect();
    let managed = layers.iter().filter(|l| l.managed && l.settings.is_some());
    bypasses.extend(managed.filter_map(|l| owner::not_admins(root, &l.path)));
    let route = events
        .iter()
        .find(|e| e.event == canary::event_name(agent))
        .and_then(|e| e.handler.as_ref());
    if let Some(h) = route.filter(|h| h["type"] == "http") {
        bypasses.extend(http::problems(&layers, h));
    }
    let canary = route.map(|h| {
        if check::reads_token(h) && std::env::var_os(TOKEN_VAR).is_none() {
            notes.push(format!(
                "${TOKEN_VAR} is not set here, so the token sent is empty"
            ));
        }
        canary::send(agent, h)
    });
    let live = bypasses.is_empty()
        && events.iter().all(EventLine::live)
        && canary.as_ref().is_some_and(|c| c.ok);
    Report {
        agent,
        live,
        layers: layers.iter().map(layer_line).collect(),
        events,
        bypasses,
        notes,
        canary,
    }
}

/// A note when hookhost's entries sit in a file the user can edit.
fn unmanaged(agent: Dialect, events: &[EventLine]) -> Option<String> {
    let file = events
        .iter()
        .find(|e| !e.managed)
        .and_then(|e| e.file.as_ref())?;
    let trust = match agent {
        Dialect::Codex => "; Codex runs it only once trusted (/hooks in codex)",
        Dialect::GeminiCli => "; Gemini CLI asks to trust a project's hooks",
        _ => "",
    };
    Some(format!(
        "hookhost's entry is in {file}, which its user can change{trust}: \
         `hookhost install {agent} --managed` pins it"
    ))
}

fn layer_line(l: &layers::Layer) -> LayerLine {
    let state = match (&l.settings, &l.error) {
        (_, Some(e)) => format!("unreadable: {e}"),
        (Some(_), None) => "read".into(),
        (None, None) => "missing".into(),
    };
    LayerLine {
        layer: l.name,
        path: l.path.display().to_string(),
        state,
    }
}

/// The report as text.
fn print(r: &Report) {
    let verdict = if r.live { "live" } else { "NOT live" };
    outln!("{}: enforcement is {verdict}", r.agent);
    for l in &r.layers {
        outln!("  layer {:<16} {} ({})", l.layer, l.path, l.state);
    }
    for e in &r.events {
        let mark = if e.live() { "ok  " } else { "FAIL" };
        let route = match (&e.route, e.fails_closed) {
            (None, _) => "no hookhost hook runs here".to_string(),
            (Some(r), true) => format!("{r}, fails closed"),
            (Some(r), false) => format!("{r}, fails OPEN"),
        };
        outln!("  {mark} {:<20} {route}", e.event);
        for b in &e.bypasses {
            outln!("         bypass: {b}");
        }
    }
    for b in &r.bypasses {
        outln!("  bypass: {b}");
    }
    for n in &r.notes {
        outln!("  note: {n}");
    }
    match &r.canary {
        Some(c) if c.ok => outln!("  canary: {}", c.said),
        Some(c) => outln!("  canary FAILED: {}", c.said),
        None => outln!(
            "  canary: not sent (no hookhost route at {})",
            canary::event_name(r.agent)
        ),
    }
}
