//! The scaling section as written: a Markdown block with one table per
//! curve, and the curves as one SVG file beside BENCHMARKS.md.

use super::events::{EventsPoint, EventsRun};
use super::raw::ACK;
use super::report::{header, micros, rate, ratio};
use super::scaling::{ChainPoint, HooksPoint, Scaling, SizePoint};
use super::svg::{Panel, Series};
use super::{Plan, svg};

/// The generated scaling block; `svg_name` is the plot's file name, beside
/// the Markdown file.
pub(super) fn render(s: &Scaling, plan: Plan, svg_name: &str) -> String {
    let mut out = header(plan);
    out += &format!(
        "\n![The scaling curves: chain length, params size, hooks configured, runtime events]({svg_name})\n\n"
    );
    out += &chain_table(&s.chain);
    out += &sizes_table(&s.sizes);
    out += &configured_table(&s.configured, plan);
    out += &events_table(&s.events);
    out += &format!("The scaling section took {:.0} s.\n", s.took.as_secs_f64());
    out
}

/// Time per chain at 64 in flight, in µs.
fn per_call_us(p: &ChainPoint) -> f64 {
    1e6 / p.rate.max(1e-9)
}

/// What each hook past the first added, in µs: (p50, time per chain at 64
/// in flight).
fn per_added_hook(first: &ChainPoint, p: &ChainPoint) -> Option<(f64, f64)> {
    let added = p.hooks.checked_sub(first.hooks).filter(|a| *a > 0)? as f64;
    let p50 = (p.latency.p50 as f64 - first.latency.p50 as f64) / 1e3 / added;
    Some((p50, (per_call_us(p) - per_call_us(first)) / added))
}

fn chain_table(points: &[ChainPoint]) -> String {
    let mut s = String::from(
        "Chain length (each hook its own `bench-hook` process):\n\n\
         | hooks | p50 | p99 | 64 in flight | time per chain at 64 in flight | p50, per added hook | time per chain at 64, per added hook |\n\
         | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    let Some(first) = points.first() else {
        return s;
    };
    for p in points {
        let added = per_added_hook(first, p).map_or(("–".into(), "–".into()), |(a, b)| {
            (format!("{a:.1} µs"), format!("{b:.1} µs"))
        });
        s += &format!(
            "| {} | {} | {} | {} | {:.1} µs | {} | {} |\n",
            p.hooks,
            micros(p.latency.p50),
            micros(p.latency.p99),
            rate(p.rate),
            per_call_us(p),
            added.0,
            added.1,
        );
    }
    s + "\n"
}

/// A size in bytes, KiB or MiB.
fn bytes(n: usize) -> String {
    match n {
        n if n >= 1 << 20 => format!("{:.0} MiB", n as f64 / (1 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.0} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

fn sizes_table(points: &[SizePoint]) -> String {
    let mut s = format!(
        "Params size (sequential calls; the floor echoes a line of the same size, \
         the short-answer floor answers it with a {}-byte line):\n\n\
         | params | calls | floor p50 | short-answer floor p50 | row 2's path p50 | vs floor | vs short-answer floor | floor p99 | row 2's path p99 |\n\
         | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
        ACK.len()
    );
    for p in points {
        let vs = |base: u64| ratio(p.host.p50 as f64 / base.max(1) as f64);
        s += &format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            bytes(p.bytes),
            p.samples,
            micros(p.floor.p50),
            micros(p.ack.p50),
            micros(p.host.p50),
            vs(p.floor.p50),
            vs(p.ack.p50),
            micros(p.floor.p99),
            micros(p.host.p99),
        );
    }
    s + "\n"
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn configured_table(points: &[HooksPoint], plan: Plan) -> String {
    let mut s = format!(
        "Hooks configured (`bench-hook` processes; each point in a fresh process; start-up the median of {}):\n\n\
         | hooks | start-up | host RSS idle | under load | high-water mark | chains/s under load |\n\
         | ---: | ---: | ---: | ---: | ---: | ---: |\n",
        plan.scale.startup_reps
    );
    for p in points {
        let m = &p.memory;
        s += &format!(
            "| {} | {:.1} ms | {:.1} MiB | {:.1} MiB | {:.1} MiB | {} |\n",
            p.hooks,
            p.start_ms,
            mib(m.idle_kib),
            mib(m.load_kib),
            mib(m.hwm_kib),
            rate(m.chains_per_s),
        );
    }
    s + "\n"
}

fn events_table(points: &[EventsPoint]) -> String {
    let mut s = String::from(
        "Runtime events (`agent.llm.delta`; each observer a `bench-observer` process; \
         a flood, back to back, then paced at 10,000 a second):\n\n\
         | observers | run | emitted | emit rate | emit p50 / p99 / slowest | received | received per s, per observer | dropped (host's count) | neither |\n\
         | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for p in points {
        s += &events_line(p.observers, "flood", &p.flood);
    }
    for p in points {
        s += &events_line(p.observers, "paced", &p.paced);
    }
    s + "\n"
}

fn events_line(observers: usize, run: &str, r: &EventsRun) -> String {
    let offered = r.offered(observers).max(1) as f64;
    let share = |n: u64| format!("{n} ({:.1} %)", 100.0 * n as f64 / offered);
    format!(
        "| {observers} | {run} | {} | {} | {} / {} / {} | {} | {} | {} | {} |\n",
        r.emitted,
        rate(r.emit_rate),
        micros(r.emit.p50),
        micros(r.emit.p99),
        micros(r.emit.max),
        share(r.received),
        rate(r.receive_rate),
        share(r.dropped),
        r.unaccounted,
    )
}

/// The SVG document: six panels, three to a row.
pub(super) fn plot(s: &Scaling) -> String {
    svg::render(
        &[
            chain_panel(&s.chain),
            added_panel(&s.chain),
            sizes_panel(&s.sizes),
            startup_panel(&s.configured),
            rss_panel(&s.configured),
            events_panel(&s.events),
        ],
        3,
    )
}

/// A series over `points`: `x` of each against `y`.
fn series<P>(name: &str, points: &[P], x: fn(&P) -> f64, y: impl Fn(&P) -> f64) -> Series {
    Series {
        name: name.into(),
        points: points.iter().map(|p| (x(p), y(p))).collect(),
    }
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

fn panel(title: &str, x: (&str, bool), y: (&str, bool), series: Vec<Series>) -> Panel {
    Panel {
        title: title.into(),
        x_label: x.0.into(),
        y_label: y.0.into(),
        x_log: x.1,
        y_log: y.1,
        series,
    }
}

fn chain_panel(points: &[ChainPoint]) -> Panel {
    let x = |p: &ChainPoint| p.hooks as f64;
    panel(
        "Chain length: time per chain",
        ("hooks in the chain", false),
        ("µs", false),
        vec![
            series("p50, one call at a time", points, x, |p| us(p.latency.p50)),
            series("1 / rate, 64 in flight", points, x, per_call_us),
        ],
    )
}

fn added_panel(points: &[ChainPoint]) -> Panel {
    let added: Vec<(f64, (f64, f64))> = match points.first() {
        Some(first) => points
            .iter()
            .filter_map(|p| Some((p.hooks as f64, per_added_hook(first, p)?)))
            .collect(),
        None => Vec::new(),
    };
    let x = |a: &(f64, (f64, f64))| a.0;
    panel(
        "Chain length: cost of each added hook",
        ("hooks in the chain", false),
        ("µs per added hook", false),
        vec![
            series("p50", &added, x, |a| a.1.0),
            series("1 / rate, 64 in flight", &added, x, |a| a.1.1),
        ],
    )
}

fn sizes_panel(points: &[SizePoint]) -> Panel {
    let x = |p: &SizePoint| p.bytes as f64;
    panel(
        "Params size: p50",
        ("params, bytes", true),
        ("µs", true),
        vec![
            series("floor: echo of the line", points, x, |p| us(p.floor.p50)),
            series("floor: a short answer", points, x, |p| us(p.ack.p50)),
            series("row 2: hookhost → Rust SDK hook", points, x, |p| {
                us(p.host.p50)
            }),
        ],
    )
}

fn startup_panel(points: &[HooksPoint]) -> Panel {
    let x = |p: &HooksPoint| p.hooks as f64;
    panel(
        "Hooks configured: start-up",
        ("hooks (bench-hook processes)", true),
        ("ms", false),
        vec![series("Host::start to all ready", points, x, |p| {
            p.start_ms
        })],
    )
}

fn rss_panel(points: &[HooksPoint]) -> Panel {
    let x = |p: &HooksPoint| p.hooks as f64;
    panel(
        "Hooks configured: host RSS",
        ("hooks (bench-hook processes)", true),
        ("MiB", false),
        vec![
            series("idle", points, x, |p| mib(p.memory.idle_kib)),
            series("under load, 64 in flight", points, x, |p| {
                mib(p.memory.load_kib)
            }),
        ],
    )
}

fn events_panel(points: &[EventsPoint]) -> Panel {
    let x = |p: &EventsPoint| p.observers as f64;
    panel(
        "Runtime events",
        ("observers", false),
        ("events per second", true),
        vec![
            series("flood: emit rate (the agent's loop)", points, x, |p| {
                p.flood.emit_rate
            }),
            series("flood: received, per observer", points, x, |p| {
                p.flood.receive_rate
            }),
            series("paced: received, per observer", points, x, |p| {
                p.paced.receive_rate
            }),
        ],
    )
}
