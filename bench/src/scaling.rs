//! The scaling section: how hookhost's costs grow, as curves.
//!
//! - chain length: 1, 2, 5, 10 and 20 hooks in one chain, each its own
//!   `bench-hook` process: sequential p50 and p99, and the rate with 64
//!   chains in flight; from those, the cost of each added hook;
//! - params size: the usual 317-byte before_tool params, then 4 KiB,
//!   64 KiB and 1 MiB (one string argument grown): row 2's path against the
//!   floor echoing a line of the same size, and against the floor
//!   answering it with a short line as a hook does, sequential p50;
//! - hooks configured: 1, 10 and 100 `bench-hook` processes, each point in
//!   a fresh child process (module `probe`): start-up, host RSS idle and
//!   under load;
//! - runtime events (module `events`): what `Host::emit` costs the agent,
//!   what observers receive, what is dropped.
//!
//! Every host is checked as the rows' are (module `checks`): each hook
//! ready and its own process, each counting every call, none failed.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hookhost::protocol::Stage;
use hookhost::{Config, Host, ProcessConfig};
use serde_json::Value;

use super::raw::{Echo, Pipe};
use super::report::params_bytes;
use super::{Latency, Paths, Plan, Res, Target, checks, concurrent_counted, events, params, probe};

/// The chain lengths measured.
pub(super) const CHAIN: [usize; 5] = [1, 2, 5, 10, 20];
/// The params sizes measured beyond the usual object, in bytes.
pub(super) const SIZES: [usize; 3] = [4 << 10, 64 << 10, 1 << 20];
/// The numbers of hooks configured.
pub(super) const CONFIGURED: [usize; 3] = [1, 10, 100];

/// How much work the scaling section does.
#[derive(Clone, Copy)]
pub(super) struct ScalePlan {
    /// Sequential calls per point (fewer for the largest params).
    pub(super) sequential: usize,
    /// The 64-in-flight window per chain length.
    pub(super) window: Duration,
    /// Start-up repetitions per hooks-configured point (median reported).
    pub(super) startup_reps: usize,
    /// Runtime events emitted per point, as a flood.
    pub(super) events: usize,
    /// Runtime events emitted per point, paced.
    pub(super) paced_events: usize,
}

impl ScalePlan {
    pub(super) fn new(quick: bool) -> ScalePlan {
        if quick {
            ScalePlan {
                sequential: 300,
                window: Duration::from_millis(500),
                startup_reps: 2,
                events: 20_000,
                paced_events: 3_000,
            }
        } else {
            ScalePlan {
                sequential: 2_000,
                window: Duration::from_secs(2),
                startup_reps: 5,
                events: 100_000,
                paced_events: 20_000,
            }
        }
    }
}

/// One chain length's figures.
pub(super) struct ChainPoint {
    pub(super) hooks: usize,
    pub(super) latency: Latency,
    /// Chains per second, 64 in flight.
    pub(super) rate: f64,
}

/// One params size's figures, sequential latency.
pub(super) struct SizePoint {
    /// The params object, serialized.
    pub(super) bytes: usize,
    /// The floor echoing the line.
    pub(super) floor: Latency,
    /// The floor answering a short line (`bench-floor --ack`).
    pub(super) ack: Latency,
    /// Row 2's path.
    pub(super) host: Latency,
    pub(super) samples: usize,
}

/// One hooks-configured point, measured in a child process.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub(super) struct HooksPoint {
    pub(super) hooks: usize,
    /// Median of `start_all_ms`.
    pub(super) start_ms: f64,
    pub(super) start_all_ms: Vec<f64>,
    pub(super) memory: probe::Memory,
}

/// Everything the section measured.
pub(super) struct Scaling {
    pub(super) chain: Vec<ChainPoint>,
    pub(super) sizes: Vec<SizePoint>,
    pub(super) configured: Vec<HooksPoint>,
    pub(super) events: Vec<events::EventsPoint>,
    pub(super) took: Duration,
}

/// Measures every curve, reporting progress on stderr.
pub(super) async fn measure(paths: &Paths, plan: Plan) -> Res<Scaling> {
    let began = Instant::now();
    let mut s = Scaling {
        chain: Vec::new(),
        sizes: Vec::new(),
        configured: Vec::new(),
        events: Vec::new(),
        took: Duration::ZERO,
    };
    for n in CHAIN {
        s.chain
            .push(step(&format!("chain of {n}"), chain_point(paths, plan, n)).await?);
    }
    for bytes in std::iter::once(0).chain(SIZES) {
        let shown = if bytes == 0 { params_bytes() } else { bytes };
        let name = format!("params of {shown} bytes");
        s.sizes
            .push(step(&name, size_point(paths, plan, bytes)).await?);
    }
    for n in CONFIGURED {
        let point = probe::run_hooks_probe(paths, plan, n);
        s.configured
            .push(step(&format!("{n} hooks configured"), point).await?);
    }
    for n in events::OBSERVERS {
        let point = events::point(paths, plan.scale, n);
        s.events
            .push(step(&format!("events, {n} observers"), point).await?);
    }
    s.took = began.elapsed();
    Ok(s)
}

async fn step<T>(name: &str, point: impl Future<Output = Res<T>>) -> Res<T> {
    eprint!("  scaling: {name} ...");
    let t = Instant::now();
    let r = point.await;
    eprintln!(" {:.1} s", t.elapsed().as_secs_f64());
    r.map_err(|e| format!("scaling, {name}: {e}").into())
}

/// `n` process hooks running `command`, each with its own `BENCH_SLOT` so
/// that none shares a process with another, intercepting before_tool and
/// observing `observe`.
pub(super) fn hooks_config(dir: &Path, command: &[String], n: usize, observe: &[&str]) -> Config {
    let mut config = Config::empty(dir);
    for i in 0..n {
        let mut p = ProcessConfig::new(command.to_vec(), vec![Stage::BeforeTool]);
        p.env.insert("BENCH_SLOT".into(), i.to_string());
        p.observe = observe.iter().map(|o| o.to_string()).collect();
        config.processes.insert(format!("h{i:03}"), p);
    }
    config
}

/// A host with `n` `bench-hook` processes, checked ready and distinct.
async fn bench_hooks(paths: &Paths, n: usize) -> Res<Host> {
    let command = [paths.bin("bench-hook").display().to_string()];
    let host = Host::start(hooks_config(&paths.bench_dir, &command, n, &[])).await;
    if let Err(e) = checks::ready(&host, n) {
        host.shutdown().await;
        return Err(e);
    }
    Ok(host)
}

async fn chain_point(paths: &Paths, plan: Plan, n: usize) -> Res<ChainPoint> {
    let host = bench_hooks(paths, n).await?;
    let measured = async {
        let target = Target::Host(host.clone(), Arc::new(params()));
        let warmup = plan.warmup.min(200);
        for _ in 0..warmup {
            target.call().await?;
        }
        let latency = Latency::of(target.samples(plan.scale.sequential).await?);
        let (rate, done) = concurrent_counted(&target, 64, plan.scale.window).await?;
        let calls = (warmup + plan.scale.sequential) as u64 + done;
        checks::every_call(&host, calls)?;
        Ok(ChainPoint {
            hooks: n,
            latency,
            rate,
        })
    }
    .await;
    host.shutdown().await;
    measured
}

/// The usual params with `arguments.command` grown so that the object is
/// `bytes` long serialized (0: the usual object as it is).
pub(super) fn params_of_size(bytes: usize) -> Res<Value> {
    let mut p = params();
    let usual = serde_json::to_vec(&p)?.len();
    if bytes > usual {
        let command = &mut p["arguments"]["command"];
        let mut grown = command.as_str().unwrap_or_default().to_string();
        // ASCII needs no escaping: one byte each.
        grown.push(' ');
        grown.push_str(&"x".repeat(bytes - usual - 1));
        *command = Value::String(grown);
    }
    Ok(p)
}

/// Sequential calls for one size: fewer past 64 KiB, at least 20.
fn size_samples(plan: Plan, bytes: usize) -> usize {
    let base = plan.scale.sequential;
    (base * (64 << 10) / bytes.max(64 << 10)).max(20)
}

async fn size_point(paths: &Paths, plan: Plan, bytes: usize) -> Res<SizePoint> {
    let p = params_of_size(bytes)?;
    let n = size_samples(plan, bytes);
    let warmup = (n / 10).max(5);
    let floor = floor_at_size(paths, Echo::of(&p)?, &[], warmup, n).await?;
    let ack = floor_at_size(paths, Echo::acked(&p)?, &["--ack"], warmup, n).await?;
    let host = bench_hooks(paths, 1).await?;
    let measured = async {
        let target = Target::Host(host.clone(), Arc::new(p.clone()));
        target.samples(warmup).await?;
        let latency = Latency::of(target.samples(n).await?);
        checks::every_call(&host, (warmup + n) as u64)?;
        Ok::<Latency, super::Error>(latency)
    }
    .await;
    host.shutdown().await;
    Ok(SizePoint {
        bytes: serde_json::to_vec(&p)?.len(),
        floor,
        ack,
        host: measured?,
        samples: n,
    })
}

/// `bench-floor ARGS` answering `n` lines of one size, after `warmup`.
async fn floor_at_size(
    paths: &Paths,
    wire: Echo,
    args: &[&str],
    warmup: usize,
    n: usize,
) -> Res<Latency> {
    let mut floor = Pipe::spawn(&paths.bin("bench-floor"), args, wire)?;
    floor.samples(warmup).await?;
    let latency = Latency::of(floor.samples(n).await?);
    floor.close().await?;
    Ok(latency)
}
