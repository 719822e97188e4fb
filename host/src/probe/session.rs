//! The run loop: reads the host's lines, answers them as a well-behaved
//! hook would (the hello held back by the hello delay, stalled stages
//! never), and stops on stdin EOF (or after the linger time), on SIGTERM,
//! or when stdout closes. Generic over its streams and its SIGTERM, so
//! that tests drive it in memory.

use std::collections::VecDeque;
use std::future::Future;
use std::time::Duration;

use hookhost_protocol::Id;
use hookhost_protocol::envelope::DecodeError;
use hookhost_protocol::framing::{Line, LineReader};
use serde::Deserialize as _;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::Options;
use super::answer::{self, Reply};
use super::record::{Arrival, Record};
use super::report::Ending;

/// The longest line read whole; a longer one is a violation by its size.
const MAX_LINE: usize = 64 * 1024 * 1024;

/// What the stdin reader hands the loop.
enum Input {
    Line(Box<Arrival>),
    /// EOF or a read error, and when.
    End(Duration),
}

/// Runs the probe over `input` and `output` until it ends; `term`
/// resolves when SIGTERM arrives.
pub(super) async fn serve<R, W>(
    opts: &Options,
    input: R,
    output: W,
    term: impl Future<Output = ()>,
) -> Record
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin,
{
    let start = Instant::now();
    let (tx, lines) = mpsc::unbounded_channel();
    let reader = tokio::spawn(read_lines(input, start, tx));
    let mut probe = Probe {
        opts,
        out: output,
        start,
        record: Record::default(),
        lines,
        hello: None,
        backlog: VecDeque::new(),
        linger_until: None,
    };
    let ended = probe.run(term).await;
    reader.abort();
    probe.record.ended = Some(ended);
    probe.record
}

/// Reads stdin line by line, stamping each line when it is read (before
/// decoding), until EOF or a read error.
async fn read_lines<R: AsyncRead + Unpin>(
    input: R,
    start: Instant,
    tx: mpsc::UnboundedSender<Input>,
) {
    let mut reader = LineReader::new(BufReader::new(input), MAX_LINE);
    let mut buf = Vec::new();
    let mut number = 0;
    loop {
        let read = reader.next(&mut buf).await;
        let at = start.elapsed();
        number += 1;
        let arrival = match read {
            Ok(Line::Complete) if buf.iter().all(u8::is_ascii_whitespace) => continue,
            Ok(Line::Complete) => Arrival::from_line(number, at, &buf),
            Ok(Line::TooLong(n)) => {
                let why = DecodeError::Parse(format!("a {n}-byte line, over the probe's cap"));
                Arrival::unreadable(number, at, why)
            }
            Ok(Line::Eof) | Err(_) => {
                let _ = tx.send(Input::End(at));
                return;
            }
        };
        if tx.send(Input::Line(Box::new(arrival))).is_err() {
            return;
        }
    }
}

/// The loop's state.
struct Probe<'o, W> {
    opts: &'o Options,
    out: W,
    start: Instant,
    record: Record,
    lines: mpsc::UnboundedReceiver<Input>,
    /// The hello being held back: its id, and when its answer is due.
    hello: Option<(Id, Instant)>,
    /// Lines that arrived while the hello answer was held back (indexes
    /// into the record), answered in order once it is written.
    backlog: VecDeque<usize>,
    /// With `--linger-ms`, when the probe gives up waiting for SIGTERM.
    linger_until: Option<Instant>,
}

/// A step of the loop: `Some` ends the run.
type Step = Option<Ending>;

impl<W: AsyncWrite + Unpin> Probe<'_, W> {
    async fn run(&mut self, term: impl Future<Output = ()>) -> Ending {
        tokio::pin!(term);
        // Far enough never to fire: the timers below are off until set.
        let never = self.start + Duration::from_secs(86_400 * 365);
        loop {
            let hello_due = self.hello.as_ref().map_or(never, |(_, t)| *t);
            let linger = self.linger_until.unwrap_or(never);
            let step = tokio::select! {
                biased;
                input = self.lines.recv(), if self.record.eof.is_none() => self.on_input(input).await,
                () = &mut term => self.on_term(),
                () = tokio::time::sleep_until(hello_due), if self.hello.is_some() => self.answer_hello().await,
                () = tokio::time::sleep_until(linger), if self.linger_until.is_some() => Some(Ending::LingerExpired),
            };
            if let Some(ended) = step {
                return ended;
            }
        }
    }

    async fn on_input(&mut self, input: Option<Input>) -> Step {
        let arrival = match input {
            Some(Input::Line(a)) => *a,
            Some(Input::End(at)) => return self.on_eof(at).await,
            None => return self.on_eof(self.start.elapsed()).await,
        };
        self.record.arrivals.push(arrival);
        let index = self.record.arrivals.len() - 1;
        if self.hello.is_some() {
            self.backlog.push_back(index);
            return None;
        }
        self.respond(index).await
    }

    /// Stdin is done: what is held back behind the hello is answered at
    /// once (a host may still read it), then the run ends, unless the
    /// probe lingers for a SIGTERM.
    async fn on_eof(&mut self, at: Duration) -> Step {
        self.record.eof = Some(at);
        while self.hello.is_some() {
            if let Some(ended) = self.answer_hello().await {
                return Some(ended);
            }
        }
        match self.opts.linger {
            Some(linger) if !linger.is_zero() => {
                self.linger_until = Some(Instant::now() + linger);
                None
            }
            _ => Some(Ending::Eof),
        }
    }

    /// SIGTERM. What the reader had already queued (the EOF, above all) is
    /// recorded too, so that a host that closed stdin just before is not
    /// blamed for an order the probe only saw late.
    fn on_term(&mut self) -> Step {
        let at = self.start.elapsed();
        self.drain_queued();
        self.record.term = Some(at);
        Some(Ending::Term)
    }

    /// Records, without answering, what the reader had already queued when
    /// the run ends early, so that the checks see it.
    fn drain_queued(&mut self) {
        while let Ok(input) = self.lines.try_recv() {
            match input {
                Input::Line(a) => self.record.arrivals.push(*a),
                Input::End(eof) if self.record.eof.is_none() => self.record.eof = Some(eof),
                Input::End(_) => {}
            }
        }
    }

    /// Answers the line at `index` as a good hook would.
    async fn respond(&mut self, index: usize) -> Step {
        let arrival = self.record.arrivals.get(index)?;
        match answer::reply(&arrival.message, self.opts) {
            Reply::Nothing => None,
            Reply::Hello(id) => {
                self.hello = Some((id, Instant::now() + self.opts.hello_delay));
                None
            }
            Reply::Now(line) => self.write(&line).await,
        }
    }

    /// Writes the held-back hello answer, then what waited behind it.
    async fn answer_hello(&mut self) -> Step {
        let (id, _) = self.hello.take()?;
        let line = answer::result(&id, answer::hello_result(self.opts));
        // Stamped before the write starts: the host cannot have the answer
        // earlier, and a stamp taken after the flush would be later than
        // the host's next line when the host is quick.
        let at = self.start.elapsed();
        if let Some(ended) = self.write(&line).await {
            return Some(ended);
        }
        self.record.hello_answered.get_or_insert(at);
        while self.hello.is_none() {
            let Some(index) = self.backlog.pop_front() else {
                break;
            };
            if let Some(ended) = self.respond(index).await {
                return Some(ended);
            }
        }
        None
    }

    /// Writes one line and notes the id it answered, as of the moment the
    /// write started; a failed write means the host closed stdout, which
    /// ends the run.
    async fn write(&mut self, line: &Value) -> Step {
        let at = self.start.elapsed();
        let mut bytes = line.to_string().into_bytes();
        bytes.push(b'\n');
        let sent = async {
            self.out.write_all(&bytes).await?;
            self.out.flush().await
        };
        if sent.await.is_err() {
            self.record.stdout_closed = Some(self.start.elapsed());
            self.drain_queued();
            return Some(Ending::StdoutClosed);
        }
        if let Some(id) = line.get("id").and_then(|v| Id::deserialize(v).ok()) {
            self.record.answered.insert(id, at);
        }
        None
    }
}
