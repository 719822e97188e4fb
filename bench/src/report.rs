//! The report: the table, the paragraphs under it, the targets, and the
//! generated block written into BENCHMARKS.md.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use super::probe::Probe;
use super::sidecar::SidecarFigures;
use super::{Plan, Res, Row, agents, params};

const GENERATED_BEGIN: &str = "<!-- hookhost-bench: generated, begin -->";
const GENERATED_END: &str = "<!-- hookhost-bench: generated, end -->";

pub(super) fn micros(ns: u64) -> String {
    let us = ns as f64 / 1e3;
    if us >= 10_000.0 {
        format!("{:.1} ms", us / 1e3)
    } else if us >= 100.0 {
        format!("{us:.0} µs")
    } else {
        format!("{us:.1} µs")
    }
}

pub(super) fn rate(per_s: f64) -> String {
    if per_s >= 1e6 {
        format!("{:.2} M/s", per_s / 1e6)
    } else if per_s >= 1e4 {
        format!("{:.0} k/s", per_s / 1e3)
    } else if per_s >= 1e3 {
        format!("{:.1} k/s", per_s / 1e3)
    } else {
        format!("{per_s:.0} /s")
    }
}

pub(super) fn ratio(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}×")
    } else if x >= 10.0 {
        format!("{x:.1}×")
    } else {
        format!("{x:.2}×")
    }
}

fn sh(cmd: &str, args: &[&str]) -> String {
    std::process::Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn machine() -> BTreeMap<&'static str, String> {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get().to_string())
        .unwrap_or_else(|_| "?".into());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let mut m = BTreeMap::new();
    m.insert("cores", cores);
    m.insert("cpu", cpu);
    m.insert("kernel", kernel);
    m.insert("date", sh("date", &["-u", "+%Y-%m-%d %H:%M UTC"]));
    m.insert("python", sh("python3", &["--version"]));
    m.insert("rustc", sh("rustc", &["--version"]));
    m
}

pub(super) fn render(
    rows: &[Row],
    probe: &Probe,
    sidecar: &SidecarFigures,
    plan: Plan,
    took: Duration,
) -> String {
    let mut s = String::new();
    let m = machine();
    let command = if plan.quick {
        "cargo run --release -p hookhost-bench -- --quick"
    } else {
        "cargo run --release -p hookhost-bench"
    };
    s += &format!(
        "Command: `{command}`{}  \n",
        if plan.quick {
            " (a QUICK run: fewer calls, shorter windows)"
        } else {
            ""
        }
    );
    s += &format!(
        "Machine: {} cores, {}, Linux {}; {}, {}  \nDate: {}  \n",
        m["cores"], m["cpu"], m["kernel"], m["python"], m["rustc"], m["date"]
    );
    s += &format!(
        "Work: before_tool with a {}-byte params object, answered `continue`. \
         Latency: {} sequential calls per row ({} for the rows spawning a process per call: 4, 10, 11) after a warm-up. \
         Throughput: {} s windows ({} s for those rows) with 1, 8 and 64 calls in flight. \
         Ratios are to the floor (row 1).\n\n",
        serde_json::to_vec(&params()).map(|v| v.len()).unwrap_or(0),
        plan.sequential,
        plan.oneshot_sequential,
        plan.window.as_secs_f64(),
        plan.oneshot_window.as_secs_f64(),
    );
    s += "| path | p50 | p99 | max | 1 in flight | 8 in flight | 64 in flight |\n";
    s += "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n";
    let floor = &rows[0];
    for r in rows {
        let lat = |v: u64, f: u64| format!("{} ({})", micros(v), ratio(v as f64 / f.max(1) as f64));
        let mut line = format!(
            "| {} | {} | {} | {} |",
            r.name,
            lat(r.latency.p50, floor.latency.p50),
            lat(r.latency.p99, floor.latency.p99),
            lat(r.latency.max, floor.latency.max),
        );
        for (i, t) in r.throughput.iter().enumerate() {
            line += &format!(
                " {} ({}) |",
                rate(*t),
                ratio(t / floor.throughput[i].max(1e-9))
            );
        }
        s += &line;
        s += "\n";
    }
    s += "\n";
    s += &format!(
        "Start-up, median of {} runs: 10 Python hooks from `Host::start` to all ready: **{:.1} ms**; \
         10 bare `{}` started in parallel: **{:.1} ms** ({}).  \n",
        plan.startup_reps,
        probe.hooks_ms,
        "python3 -c pass",
        probe.bare_ms,
        ratio(probe.hooks_ms / probe.bare_ms.max(1e-9)),
    );
    s += &format!(
        "Host RSS with 10 Python hooks (a fresh process): idle **{:.1} MiB**, under load (64 chains in flight through all 10, {} chains/s) **{:.1} MiB**, high-water mark {:.1} MiB.\n\n",
        probe.rss_idle_kib as f64 / 1024.0,
        rate(probe.load_chains_per_s),
        probe.rss_load_kib as f64 / 1024.0,
        probe.hwm_kib as f64 / 1024.0,
    );
    s += &format!(
        "Sidecar (row 6): `hookhost serve --stdio` with one Rust hook, from spawn to the first answer **{:.1} ms**; \
         the sidecar process's high-water mark after the row (its hook not counted) **{:.1} MiB**.\n\n",
        sidecar.ready_ms,
        sidecar.hwm_kib as f64 / 1024.0,
    );
    if let (Some(ws), Some(http)) = (rows.get(6), rows.get(7)) {
        let vs = |r: &Row| ratio(r.latency.p50 as f64 / rows[1].latency.p50.max(1) as f64);
        s += &format!(
            "Network (rows 7 and 8): the row 2 hook served on loopback by the Rust SDK's \
             jsonrpsee server; p50 over WebSocket **{}** ({} row 2's stdio), over HTTP **{}** ({}).\n\n",
            micros(ws.latency.p50),
            vs(ws),
            micros(http.latency.p50),
            vs(http),
        );
    }
    s += &agents::summary(rows, plan);
    s += "| target | result | measured |\n| --- | --- | --- |\n";
    for (name, met, what) in targets(rows, probe) {
        s += &format!(
            "| {name} | {} | {what} |\n",
            if met { "met" } else { "**missed**" }
        );
    }
    s += &format!("\nThe run took {:.0} s.\n", took.as_secs_f64());
    s
}

/// The targets: what each is, whether it was met, what was measured.
fn targets(rows: &[Row], probe: &Probe) -> Vec<(String, bool, String)> {
    let (fl, rust, py, one, mcp, side) =
        (&rows[0], &rows[1], &rows[2], &rows[3], &rows[4], &rows[5]);
    let p50 = |r: &Row| r.latency.p50 as f64;
    let mut targets: Vec<(String, bool, String)> = vec![
        (
            "hookhost → Rust p50 ≤ 2× the floor's p50".into(),
            p50(rust) <= 2.0 * p50(fl),
            ratio(p50(rust) / p50(fl)),
        ),
        (
            "hookhost → Rust p50 ≥ 100× faster than the one-shot hook".into(),
            p50(one) >= 100.0 * p50(rust),
            format!("{} faster", ratio(p50(one) / p50(rust))),
        ),
        (
            "hookhost → Rust p50 ≤ rmcp's p50".into(),
            p50(rust) <= p50(mcp),
            format!(
                "{} vs {}",
                micros(rust.latency.p50),
                micros(mcp.latency.p50)
            ),
        ),
        (
            "sidecar → Rust p50 ≤ 2× hookhost → Rust p50".into(),
            p50(side) <= 2.0 * p50(rust),
            format!(
                "{} vs {} ({})",
                micros(side.latency.p50),
                micros(rust.latency.p50),
                ratio(p50(side) / p50(rust))
            ),
        ),
        (
            "≥ 200,000 calls/s to one Rust hook, 64 in flight".into(),
            rust.throughput[2] >= 200_000.0,
            rate(rust.throughput[2]),
        ),
        (
            "≥ 30,000 calls/s to one Python hook, 64 in flight".into(),
            py.throughput[2] >= 30_000.0,
            rate(py.throughput[2]),
        ),
        (
            "10 Python hooks ready ≤ 1.5× 10 bare interpreter starts".into(),
            probe.hooks_ms <= 1.5 * probe.bare_ms,
            format!("{:.1} ms vs {:.1} ms", probe.hooks_ms, probe.bare_ms),
        ),
        (
            "host RSS ≤ 20 MiB with 10 hooks".into(),
            (probe.rss_load_kib.max(probe.rss_idle_kib) as f64) <= 20.0 * 1024.0,
            format!(
                "{:.1} MiB idle, {:.1} MiB under load",
                probe.rss_idle_kib as f64 / 1024.0,
                probe.rss_load_kib as f64 / 1024.0
            ),
        ),
    ];
    targets.extend(agents::targets(rows));
    targets
}

/// Writes the generated block, keeping whatever surrounds it in an
/// existing file.
pub(super) fn write_report(path: &Path, report: &str) -> Res<()> {
    let block = format!("{GENERATED_BEGIN}\n{report}{GENERATED_END}\n");
    let text = match std::fs::read_to_string(path) {
        Ok(old) => match (old.find(GENERATED_BEGIN), old.find(GENERATED_END)) {
            (Some(a), Some(b)) if a < b => {
                let tail = &old[b + GENERATED_END.len()..];
                format!(
                    "{}{block}{}",
                    &old[..a],
                    tail.strip_prefix('\n').unwrap_or(tail)
                )
            }
            _ => format!("# Benchmarks\n\n{block}"),
        },
        Err(_) => format!("# Benchmarks\n\n{block}"),
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, text)?;
    Ok(())
}
