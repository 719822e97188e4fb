//! The report: the table, the paragraphs under it, the targets, and the
//! generated block written into BENCHMARKS.md.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use super::filters::{MATCHES_ROW, STARTS_WITH_ROW};
use super::probe::Probe;
use super::raw::{FLOOR_ROW, SDK_ROW};
use super::sidecar::SidecarFigures;
use super::{
    NODE_ROW, PY_ECHO_ROW, PYTHON_ROW, Plan, RUST_ROW, Res, Row, Rows, agents, nemo, params,
};

/// A generated block: its begin and end markers, and the heading it gets
/// when a file has no such block yet.
pub(super) type Block = (&'static str, &'static str, &'static str);

/// The rows, the lines under them and the targets.
pub(super) const ROWS_BLOCK: Block = (
    "<!-- hookhost-bench: generated, begin -->",
    "<!-- hookhost-bench: generated, end -->",
    "",
);
/// The scaling section's tables and plot.
pub(super) const SCALING_BLOCK: Block = (
    "<!-- hookhost-bench: scaling, begin -->",
    "<!-- hookhost-bench: scaling, end -->",
    "## Scaling\n\n",
);

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

/// The generated block: how the run was made, the table, the lines under
/// it and the targets.
pub(super) fn render(measured: &Rows, plan: Plan, (took, scaling): (Duration, Duration)) -> String {
    let rows = &measured.rows[..];
    let mut s = header(plan);
    s += &work(plan);
    s += &table(rows);
    if let Some(probe) = &measured.probe {
        s += &probe_lines(probe, plan);
    }
    if plan.wants(6) {
        s += &sidecar_line(&measured.sidecar);
    }
    s += &network_line(rows);
    s += &agents::summary(rows, plan);
    s += &nemo::summary(rows, measured.nemo_left_out.as_deref());
    s += &rows_12_13(rows);
    s += &targets_table(rows, measured.probe.as_ref());
    s += &format!(
        "\nThe run took {:.0} s, the scaling section below {:.0} s of it.\n",
        took.as_secs_f64(),
        scaling.as_secs_f64()
    );
    s
}

/// The command, the machine and the date.
pub(super) fn header(plan: Plan) -> String {
    let m = machine();
    let mut flags: Vec<String> = [
        (plan.quick, "--quick"),
        (plan.scaling_only, "--scaling-only"),
    ]
    .into_iter()
    .filter(|(on, _)| *on)
    .map(|(_, flag)| flag.to_string())
    .collect();
    if let Some(rows) = plan.rows {
        let listed: Vec<String> = (0..64)
            .filter(|n| rows & (1 << n) != 0)
            .map(|n| n.to_string())
            .collect();
        flags.push(format!("--rows {}", listed.join(",")));
    }
    let command = match flags.is_empty() {
        true => "cargo run --release -p hookhost-bench".to_string(),
        false => format!(
            "cargo run --release -p hookhost-bench -- {}",
            flags.join(" ")
        ),
    };
    let quick = match plan.quick {
        true => " (a QUICK run: fewer calls, shorter windows)",
        false => "",
    };
    format!(
        "Command: `{command}`{quick}  \n\
         Machine: {} cores, {}, Linux {}; {}, {}  \nDate: {}  \n",
        m["cores"], m["cpu"], m["kernel"], m["python"], m["rustc"], m["date"]
    )
}

/// What each row does, and how often.
fn work(plan: Plan) -> String {
    format!(
        "Work: before_tool with a {}-byte params object, answered `continue`. \
         Latency: {} sequential calls per row ({} for the rows spawning a process per call: 4, 10, 11) after a warm-up. \
         Throughput: {} s windows ({} s for those rows) with 1, 8 and 64 calls in flight. \
         Ratios are to the floor (row 1).\n\n",
        params_bytes(),
        plan.sequential,
        plan.oneshot_sequential,
        plan.window.as_secs_f64(),
        plan.oneshot_window.as_secs_f64(),
    )
}

/// The size of the usual params object, serialized.
pub(super) fn params_bytes() -> usize {
    serde_json::to_vec(&params()).map_or(0, |v| v.len())
}

/// One line per row, each figure with its ratio to the floor's (none
/// when the floor was not measured, as with `--rows`).
fn table(rows: &[Row]) -> String {
    let mut s =
        String::from("| path | p50 | p99 | max | 1 in flight | 8 in flight | 64 in flight |\n");
    s += "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n";
    let floor = find(rows, FLOOR_ROW);
    let vs = |v: f64, base: Option<f64>| {
        base.map_or(String::new(), |b| format!(" ({})", ratio(v / b.max(1e-9))))
    };
    for r in rows {
        let lat =
            |v: u64, f: Option<u64>| format!("{}{}", micros(v), vs(v as f64, f.map(|f| f as f64)));
        s += &format!(
            "| {} | {} | {} | {} |",
            r.name,
            lat(r.latency.p50, floor.map(|f| f.latency.p50)),
            lat(r.latency.p99, floor.map(|f| f.latency.p99)),
            lat(r.latency.max, floor.map(|f| f.latency.max)),
        );
        for (i, t) in r.throughput.iter().enumerate() {
            s += &format!(" {}{} |", rate(*t), vs(*t, floor.map(|f| f.throughput[i])));
        }
        s += "\n";
    }
    s + "\n"
}

/// The start-up and RSS figures of the probe.
fn probe_lines(probe: &Probe, plan: Plan) -> String {
    let mib = |kib: u64| kib as f64 / 1024.0;
    format!(
        "Start-up, median of {} runs: 10 Python hooks from `Host::start` to all ready: **{:.1} ms**; \
         10 bare `python3 -c pass` started in parallel: **{:.1} ms** ({}).  \n\
         Host RSS with 10 Python hooks (a fresh process): idle **{:.1} MiB**, under load (64 chains in flight through all 10, {} chains/s) **{:.1} MiB**, high-water mark {:.1} MiB.\n\n",
        plan.startup_reps,
        probe.hooks_ms,
        probe.bare_ms,
        ratio(probe.hooks_ms / probe.bare_ms.max(1e-9)),
        mib(probe.rss_idle_kib),
        rate(probe.load_chains_per_s),
        mib(probe.rss_load_kib),
        mib(probe.hwm_kib),
    )
}

fn sidecar_line(sidecar: &SidecarFigures) -> String {
    format!(
        "Sidecar (row 6): `hookhost serve --stdio` with one Rust hook, from spawn to the first answer **{:.1} ms**; \
         the sidecar process's high-water mark after the row (its hook not counted) **{:.1} MiB**.\n\n",
        sidecar.ready_ms,
        sidecar.hwm_kib as f64 / 1024.0,
    )
}

fn network_line(rows: &[Row]) -> String {
    let (Some(rust), Some(ws), Some(http)) =
        (numbered(rows, 2), numbered(rows, 7), numbered(rows, 8))
    else {
        return String::new();
    };
    let vs = |r: &Row| ratio(r.latency.p50 as f64 / rust.latency.p50.max(1) as f64);
    format!(
        "Network (rows 7 and 8): the row 2 hook served on loopback by the Rust SDK's \
         jsonrpsee server; p50 over WebSocket **{}** ({} row 2's stdio), over HTTP **{}** ({}).\n\n",
        micros(ws.latency.p50),
        vs(ws),
        micros(http.latency.p50),
        vs(http),
    )
}

/// The paragraph about rows 12 and 13, the baselines of issue 22's ratios.
fn rows_12_13(rows: &[Row]) -> String {
    let (Some(py), Some(echo), Some(sdk), Some(floor)) = (
        find(rows, PYTHON_ROW),
        find(rows, PY_ECHO_ROW),
        find(rows, SDK_ROW),
        find(rows, FLOOR_ROW),
    ) else {
        return String::new();
    };
    format!(
        "Baselines (rows 12 and 13): row 12 is row 3's path to `bench/py_echo.py`, a stdlib-only \
         Python hook (`json.loads` and `json.dumps` per line, a write and a flush per answer); \
         at 64 in flight the Python SDK hook does {} of it. Row 13 is row 2's `bench-hook` driven \
         by the harness over a raw pipe pair (the hello by hand, then before_tool lines with the \
         params pre-encoded and a fresh id each, answers matched by id), so the Rust SDK's own cost \
         without the host: {} of the floor's rate at 64 in flight, p50 {}.\n\n",
        ratio(py.throughput[2] / echo.throughput[2].max(1e-9)),
        ratio(sdk.throughput[2] / floor.throughput[2].max(1e-9)),
        micros(sdk.latency.p50),
    )
}

fn targets_table(rows: &[Row], probe: Option<&Probe>) -> String {
    let mut s = String::from("| target | result | measured |\n| --- | --- | --- |\n");
    for (name, met, what) in targets(rows, probe) {
        let result = if met { "met" } else { "**missed**" };
        s += &format!("| {name} | {result} | {what} |\n");
    }
    s += "\nRetired targets (issue 35), each with the reason:\n\n| retired target | why |\n| --- | --- |\n";
    for (name, why) in retired(rows) {
        s += &format!("| {name} | {why} |\n");
    }
    s
}

/// The row called `name`, if this run measured it.
pub(super) fn find<'a>(rows: &'a [Row], name: &str) -> Option<&'a Row> {
    rows.iter().find(|r| r.name == name)
}

/// Row `n` by the number its name starts with: with `--rows` a row's place
/// in the list is not its number.
fn numbered(rows: &[Row], n: u32) -> Option<&Row> {
    let prefix = format!("{n}. ");
    rows.iter().find(|r| r.name.starts_with(&prefix))
}

/// A target: what it is, whether it was met, what was measured.
type Target = (String, bool, String);

/// The targets: issue 22's ratios, then the older ones still in force,
/// then issue 35's against the competitor.
fn targets(rows: &[Row], probe: Option<&Probe>) -> Vec<Target> {
    let mut targets = ratio_targets(rows);
    targets.extend(probe.map(probe_targets).unwrap_or_default());
    targets.extend(oneshot_targets(rows));
    targets.extend(agents::targets(rows));
    targets.extend(agents::floor_targets(rows));
    targets.extend(nemo::targets(rows));
    targets
}

/// What a ratio target compares: the 64-in-flight rate (at least `k`×
/// the baseline's) or the p50 (at most `k`×).
#[derive(Clone, Copy)]
enum Compare {
    Rate,
    P50,
}

/// Ratio targets (issue 22's, issue 35's filter, issue 36's Node SDK): (what, row, baseline,
/// comparison, factor).
const RATIO_TARGETS: [(&str, &str, &str, Compare, f64); 5] = [
    (
        "hookhost → Rust (row 2) p50 ≤ 1.5× the floor's p50",
        RUST_ROW,
        FLOOR_ROW,
        Compare::P50,
        1.5,
    ),
    (
        "hookhost → Python SDK (row 3), 64 in flight: ≥ 0.6× the stdlib echo hook's (row 12)",
        PYTHON_ROW,
        PY_ECHO_ROW,
        Compare::Rate,
        0.6,
    ),
    (
        "hookhost → Node SDK (row 19), 64 in flight: ≥ 1.0× the Python SDK hook's (row 3)",
        NODE_ROW,
        PYTHON_ROW,
        Compare::Rate,
        1.0,
    ),
    (
        "Rust SDK alone (row 13), 64 in flight: ≥ 0.5× the floor's rate",
        SDK_ROW,
        FLOOR_ROW,
        Compare::Rate,
        0.5,
    ),
    (
        "`if` with constant matches() (row 15) p50 ≤ 1.2× the same filter with startsWith (row 14)",
        MATCHES_ROW,
        STARTS_WITH_ROW,
        Compare::P50,
        1.2,
    ),
];

/// Targets of earlier rounds that measured the SDK or the extra process
/// rather than the host, kept in the report with the reason they went
/// and this run's figures behind it.
fn retired(rows: &[Row]) -> Vec<(&'static str, String)> {
    let (Some(floor), Some(rust), Some(sdk)) = (
        find(rows, FLOOR_ROW),
        find(rows, RUST_ROW),
        find(rows, SDK_ROW),
    ) else {
        return Vec::new();
    };
    let sdk_share = ratio(sdk.throughput[2] / floor.throughput[2].max(1e-9));
    vec![
        (
            "hookhost → Rust (row 2), 64 in flight: ≥ 0.30× the floor's rate",
            format!(
                "it measures the hook, not the host: the Rust SDK alone over a raw pipe (row 13) \
                 does {sdk_share} of the floor's rate at 64 in flight, so no host in front of it can reach 0.30×"
            ),
        ),
        (
            "sidecar (row 6) p50 ≤ 1.5× hookhost → Rust (row 2) p50",
            format!(
                "the sidecar is row 2's path plus a process and one more round trip, and one round \
                 trip over a pipe alone (the floor, {}) is more than the 0.5× row 2 ({}) the target allows",
                micros(floor.latency.p50),
                micros(rust.latency.p50 / 2)
            ),
        ),
    ]
}

/// Issue 22's: each row against a baseline measured in the same run.
fn ratio_targets(rows: &[Row]) -> Vec<Target> {
    let mut out = Vec::new();
    for (what, row, base, compare, k) in RATIO_TARGETS {
        let (Some(row), Some(base)) = (find(rows, row), find(rows, base)) else {
            continue;
        };
        out.push(match compare {
            Compare::Rate => at_least(what, row, base, k),
            Compare::P50 => p50_within(what, row, base, k),
        });
    }
    out
}

/// `row`'s 64-in-flight rate ≥ `k`× `base`'s.
fn at_least(name: &str, row: &Row, base: &Row, k: f64) -> Target {
    let (r, b) = (row.throughput[2], base.throughput[2]);
    let what = format!("{} vs {} ({})", rate(r), rate(b), ratio(r / b.max(1e-9)));
    (name.into(), r >= k * b, what)
}

/// `row`'s p50 ≤ `k`× `base`'s.
fn p50_within(name: &str, row: &Row, base: &Row, k: f64) -> Target {
    let (r, b) = (row.latency.p50 as f64, base.latency.p50 as f64);
    let what = format!(
        "{} vs {} ({})",
        micros(row.latency.p50),
        micros(base.latency.p50),
        ratio(r / b.max(1.0))
    );
    (name.into(), r <= k * b, what)
}

/// Start-up and memory, from the probe.
fn probe_targets(probe: &Probe) -> Vec<Target> {
    let mib = |kib: u64| kib as f64 / 1024.0;
    vec![
        (
            "10 Python SDK hooks ready ≤ 1.3× 10 bare interpreter starts".into(),
            probe.hooks_ms <= 1.3 * probe.bare_ms,
            format!(
                "{:.1} ms vs {:.1} ms ({})",
                probe.hooks_ms,
                probe.bare_ms,
                ratio(probe.hooks_ms / probe.bare_ms.max(1e-9))
            ),
        ),
        (
            "host RSS ≤ 20 MiB with 10 hooks".into(),
            mib(probe.rss_load_kib.max(probe.rss_idle_kib)) <= 20.0,
            format!(
                "{:.1} MiB idle, {:.1} MiB under load",
                mib(probe.rss_idle_kib),
                mib(probe.rss_load_kib)
            ),
        ),
    ]
}

/// Row 2 against the one-shot hook (row 4) and rmcp (row 5).
fn oneshot_targets(rows: &[Row]) -> Vec<Target> {
    let (Some(rust), Some(one), Some(mcp)) =
        (numbered(rows, 2), numbered(rows, 4), numbered(rows, 5))
    else {
        return Vec::new();
    };
    let p50 = |r: &Row| r.latency.p50 as f64;
    vec![
        (
            "hookhost → Rust p50 ≥ 100× faster than the one-shot hook".into(),
            p50(one) >= 100.0 * p50(rust),
            format!("{} faster", ratio(p50(one) / p50(rust).max(1.0))),
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
    ]
}

/// Writes each generated block in place of its old copy, keeping whatever
/// surrounds it; a block the file lacks is added at its end, under its
/// heading.
pub(super) fn write_report(path: &Path, blocks: &[(Block, String)]) -> Res<()> {
    let mut text = match std::fs::read_to_string(path) {
        Ok(old) => old,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => "# Benchmarks\n".into(),
        Err(e) => return Err(format!("{}: {e}", path.display()).into()),
    };
    for (block, content) in blocks {
        text = upsert(&text, *block, content);
    }
    std::fs::write(path, text)?;
    Ok(())
}

/// `text` with the block between `begin` and `end` replaced by `content`,
/// or added at the end.
fn upsert(text: &str, (begin, end, heading): Block, content: &str) -> String {
    let block = format!("{begin}\n{content}{end}\n");
    match (text.find(begin), text.find(end)) {
        (Some(a), Some(b)) if a < b => {
            let tail = &text[b + end.len()..];
            let tail = tail.strip_prefix('\n').unwrap_or(tail);
            format!("{}{block}{tail}", &text[..a])
        }
        _ => format!("{}\n\n{heading}{block}", text.trim_end()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_is_replaced_in_place_and_a_missing_one_added() {
        let old = "# B\n\nintro\n<!-- hookhost-bench: generated, begin -->\nold\n<!-- hookhost-bench: generated, end -->\nprose\n";
        let new = upsert(old, ROWS_BLOCK, "new\n");
        assert_eq!(new, old.replace("old\n", "new\n"));
        let both = upsert(&new, SCALING_BLOCK, "curves\n");
        assert!(both.starts_with(&new.trim_end().to_string()));
        assert!(both.ends_with("prose\n\n## Scaling\n\n<!-- hookhost-bench: scaling, begin -->\ncurves\n<!-- hookhost-bench: scaling, end -->\n"));
    }
}
