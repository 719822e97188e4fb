//! The start-up and memory probe: run in a fresh child process, so that
//! the rows measured before it do not inflate its RSS.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hookhost::{Config, Host};
use tokio::process::Command;

use super::scaling::{HooksPoint, hooks_config};
use super::{Paths, Plan, Res, Target, checks, concurrent_counted, params};

/// What the start-up and memory probe (a child process) measured.
#[derive(Default, Clone, serde::Serialize, serde::Deserialize)]
pub(super) struct Probe {
    pub(super) bare_ms: f64,
    pub(super) hooks_ms: f64,
    pub(super) bare_all_ms: Vec<f64>,
    pub(super) hooks_all_ms: Vec<f64>,
    pub(super) rss_idle_kib: u64,
    pub(super) rss_load_kib: u64,
    pub(super) hwm_kib: u64,
    pub(super) load_chains_per_s: f64,
}

/// Runs the start-up and memory probe in a fresh copy of this program.
pub(super) async fn run_probe(paths: &Paths, plan: Plan) -> Res<Probe> {
    let args = [
        "--probe".into(),
        paths.python.clone(),
        paths.script("py_hook.py").display().to_string(),
        paths.bench_dir.display().to_string(),
        plan.startup_reps.to_string(),
        plan.load_window.as_millis().to_string(),
    ];
    in_child(paths, &args).await
}

/// The scaling section's hooks-configured point: `hooks` Rust SDK hooks
/// (`bench-hook`, each its own process), in a fresh copy of this program.
pub(super) async fn run_hooks_probe(paths: &Paths, plan: Plan, hooks: usize) -> Res<HooksPoint> {
    let args = [
        "--probe-hooks".into(),
        paths.bin("bench-hook").display().to_string(),
        paths.bench_dir.display().to_string(),
        hooks.to_string(),
        plan.scale.startup_reps.to_string(),
        plan.load_window.as_millis().to_string(),
    ];
    in_child(paths, &args).await
}

/// Runs this program with `args`; its last line of stdout, as JSON.
async fn in_child<T: serde::de::DeserializeOwned>(paths: &Paths, args: &[String]) -> Res<T> {
    // Not current_exe(): `ensure_helpers` may have rebuilt this very file.
    let out = Command::new(paths.bin("hookhost-bench"))
        .args(args)
        .stderr(Stdio::inherit())
        .output()
        .await?;
    if !out.status.success() {
        return Err(format!("the probe {} failed ({})", args[0], out.status).into());
    }
    let text = String::from_utf8(out.stdout)?;
    let last = text.lines().last().ok_or("the probe said nothing")?;
    Ok(serde_json::from_str(last)?)
}

/// `VmRSS` and `VmHWM` of this process, in KiB.
pub(super) fn memory() -> (u64, u64) {
    memory_of("/proc/self/status")
}

/// `VmRSS` and `VmHWM` from a `/proc/PID/status` file, in KiB.
pub(super) fn memory_of(status_file: &str) -> (u64, u64) {
    let status = std::fs::read_to_string(status_file).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

pub(super) fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

pub(super) async fn probe_main(args: &[String]) -> Res<()> {
    let [python, script, dir, reps, load_ms] = args else {
        return Err("usage: --probe PYTHON SCRIPT DIR REPS LOAD_MS".into());
    };
    let command = vec![python.clone(), script.clone()];
    let config = hooks_config(Path::new(dir), &command, 10, &[]);
    let (mut probe, host) = startups(python, &config, reps.parse()?).await?;
    let m = memory_under_load(&host, Duration::from_millis(load_ms.parse()?)).await;
    host.shutdown().await;
    let m = m?;
    (probe.rss_idle_kib, probe.rss_load_kib, probe.hwm_kib) = (m.idle_kib, m.load_kib, m.hwm_kib);
    probe.load_chains_per_s = m.chains_per_s;
    println!("{}", serde_json::to_string(&probe)?);
    Ok(())
}

/// `reps` starts of the 10 Python hooks of `config`, each beside 10 bare
/// interpreter starts; the figures and the last rep's host, still up.
async fn startups(python: &str, config: &Config, reps: usize) -> Res<(Probe, Host)> {
    let mut probe = Probe::default();
    let mut host: Option<Host> = None;
    for rep in 0..reps.max(1) {
        // One host at a time: the last rep's is measured under load.
        if let Some(old) = host.take() {
            old.shutdown().await;
        }
        // Alternate which goes first, so that neither always gets a warm cache.
        let (b, (k, h)) = if rep % 2 == 0 {
            let b = bare_starts(python, 10).await?;
            (b, timed_start(config, 10).await?)
        } else {
            let k = timed_start(config, 10).await?;
            (bare_starts(python, 10).await?, k)
        };
        probe.bare_all_ms.push(b);
        probe.hooks_all_ms.push(k);
        host = Some(h);
    }
    probe.bare_ms = median(&probe.bare_all_ms);
    probe.hooks_ms = median(&probe.hooks_all_ms);
    Ok((probe, host.ok_or("no host")?))
}

/// `--probe-hooks BIN DIR N REPS LOAD_MS`: start-up and host memory with
/// `N` hooks running `BIN`, each its own process.
pub(super) async fn hooks_probe_main(args: &[String]) -> Res<()> {
    let [bin, dir, n, reps, load_ms] = args else {
        return Err("usage: --probe-hooks BIN DIR N REPS LOAD_MS".into());
    };
    let n: usize = n.parse()?;
    let config = hooks_config(Path::new(dir), std::slice::from_ref(bin), n, &[]);
    let mut point = HooksPoint {
        hooks: n,
        ..HooksPoint::default()
    };
    let mut host: Option<Host> = None;
    for _ in 0..reps.parse::<usize>()?.max(1) {
        if let Some(old) = host.take() {
            old.shutdown().await;
        }
        let (ms, h) = timed_start(&config, n).await?;
        point.start_all_ms.push(ms);
        host = Some(h);
    }
    point.start_ms = median(&point.start_all_ms);
    let host = host.ok_or("no host")?;
    let m = memory_under_load(&host, Duration::from_millis(load_ms.parse()?)).await;
    host.shutdown().await;
    point.memory = m?;
    println!("{}", serde_json::to_string(&point)?);
    Ok(())
}

/// `Host::start` to all `n` hooks ready, in ms; checked to be `n`
/// distinct processes.
async fn timed_start(config: &Config, n: usize) -> Res<(f64, Host)> {
    let t = Instant::now();
    let host = Host::start(config.clone()).await;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    if let Err(e) = checks::ready(&host, n) {
        host.shutdown().await;
        return Err(e);
    }
    Ok((ms, host))
}

/// `n` bare interpreters (`python -c pass`) started at once, to all
/// exited, in ms.
async fn bare_starts(python: &str, n: usize) -> Res<f64> {
    let t = Instant::now();
    let mut children = Vec::new();
    for _ in 0..n {
        let child = Command::new(python)
            .args(["-c", "pass"])
            .stdin(Stdio::null())
            .spawn()?;
        children.push(child);
    }
    for mut c in children {
        c.wait().await?;
    }
    Ok(t.elapsed().as_secs_f64() * 1e3)
}

/// This process's memory with `host` idle, then under load.
#[derive(Default, Clone, serde::Serialize, serde::Deserialize)]
pub(super) struct Memory {
    /// `VmRSS` after 300 ms idle.
    pub(super) idle_kib: u64,
    /// The highest `VmRSS` sampled every 20 ms under load.
    pub(super) load_kib: u64,
    /// `VmHWM` after the load.
    pub(super) hwm_kib: u64,
    /// Chains per second under load (64 in flight through every hook).
    pub(super) chains_per_s: f64,
}

/// Measures [`Memory`]; every hook must have answered every chain of the
/// load.
async fn memory_under_load(host: &Host, load: Duration) -> Res<Memory> {
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut m = Memory {
        idle_kib: memory().0,
        ..Memory::default()
    };
    let target = Target::Host(host.clone(), Arc::new(params()));
    let peak = Arc::new(AtomicU64::new(0));
    let sampler = {
        let peak = peak.clone();
        tokio::spawn(async move {
            loop {
                peak.fetch_max(memory().0, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    let loaded = concurrent_counted(&target, 64, load).await;
    sampler.abort();
    let (rate, calls) = loaded?;
    checks::every_call(host, calls)?;
    let (rss, hwm) = memory();
    (m.load_kib, m.hwm_kib, m.chains_per_s) = (peak.load(Ordering::Relaxed).max(rss), hwm, rate);
    Ok(m)
}
