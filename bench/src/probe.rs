//! The start-up and memory probe: run in a fresh child process, so that
//! the rows measured before it do not inflate its RSS.

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hookhost::protocol::Stage;
use hookhost::{Config, Host, ProcessConfig};
use tokio::process::Command;

use super::{Error, Paths, Plan, Res, Target, concurrent, params};

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

// ---------------------------------------------------------------- probe

/// Runs the start-up and memory probe in a fresh copy of this program.
pub(super) async fn run_probe(paths: &Paths, plan: Plan) -> Res<Probe> {
    // Not current_exe(): `ensure_helpers` may have rebuilt this very file.
    let out = Command::new(paths.bin("hookhost-bench"))
        .arg("--probe")
        .arg(&paths.python)
        .arg(paths.script("py_hook.py"))
        .arg(paths.bench_dir.as_os_str())
        .arg(plan.startup_reps.to_string())
        .arg(plan.load_window.as_millis().to_string())
        .stderr(Stdio::inherit())
        .output()
        .await?;
    if !out.status.success() {
        return Err(format!("the probe failed ({})", out.status).into());
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
    let reps: usize = reps.parse()?;
    let load = Duration::from_millis(load_ms.parse()?);
    let mut config = Config::empty(dir);
    for i in 0..10 {
        let mut p = ProcessConfig::new(
            vec![python.clone(), script.clone()],
            vec![Stage::BeforeTool],
        );
        // A distinct environment per hook, so that they are 10 processes.
        p.env.insert("BENCH_SLOT".into(), i.to_string());
        config.processes.insert(format!("py{i:02}"), p);
    }
    let mut probe = Probe::default();
    let mut host = None;
    for rep in 0..reps {
        let bare = async {
            let t = Instant::now();
            let mut children = Vec::new();
            for _ in 0..10 {
                children.push(
                    Command::new(python)
                        .args(["-c", "pass"])
                        .stdin(Stdio::null())
                        .spawn()?,
                );
            }
            for mut c in children {
                c.wait().await?;
            }
            Ok::<f64, Error>(t.elapsed().as_secs_f64() * 1e3)
        };
        let hooks = async {
            let t = Instant::now();
            let h = Host::start(config.clone()).await;
            let ms = t.elapsed().as_secs_f64() * 1e3;
            let up = h.hooks().iter().filter(|i| i.protocol.is_some()).count();
            if up != 10 {
                return Err(format!("{up} of 10 hooks started: {:?}", h.start_failures()).into());
            }
            Ok::<(f64, Host), Error>((ms, h))
        };
        // Alternate which goes first, so that neither always gets a warm cache.
        let (b, (k, h)) = if rep % 2 == 0 {
            let b = bare.await?;
            (b, hooks.await?)
        } else {
            let k = hooks.await?;
            (bare.await?, k)
        };
        probe.bare_all_ms.push(b);
        probe.hooks_all_ms.push(k);
        if rep + 1 == reps {
            host = Some(h);
        } else {
            h.shutdown().await;
        }
    }
    probe.bare_ms = median(&probe.bare_all_ms);
    probe.hooks_ms = median(&probe.hooks_all_ms);
    let host = host.ok_or("no host")?;

    tokio::time::sleep(Duration::from_millis(300)).await;
    probe.rss_idle_kib = memory().0;

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
    probe.load_chains_per_s = concurrent(&target, 64, load).await?;
    sampler.abort();
    let (rss, hwm) = memory();
    probe.rss_load_kib = peak.load(Ordering::Relaxed).max(rss);
    probe.hwm_kib = hwm;
    host.shutdown().await;
    println!("{}", serde_json::to_string(&probe)?);
    Ok(())
}
