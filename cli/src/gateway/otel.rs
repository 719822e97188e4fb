//! `hookhost serve --otlp URL`: the library's spans (a hook point's
//! `execute_hook`, each hook call's `apply_guardrail`, see the library's
//! `observe::trace`) exported as OpenTelemetry traces over OTLP/HTTP
//! (protobuf) to a collector, and the W3C trace context an agent's HTTP
//! request carries taken as their parent.
//!
//! Export never touches a decision: finished spans go to a bounded queue
//! ([`QUEUE`]; past it they are dropped) that a thread of the SDK's empties
//! in batches, sending them on a one-thread runtime of its own, each send
//! bounded by [`SEND_TIMEOUT`]. An unreachable or slow collector costs
//! spans, never an answer's time. At exit what is queued is sent, within
//! [`FLUSH`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use hyper_util::client::legacy::connect::HttpConnector;
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{TraceContextExt, TracerProvider};
use opentelemetry_http::hyper::HyperClient;
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider};
use tracing::Level;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::filter_fn;

/// Finished spans waiting for export; past this many new ones are dropped.
const QUEUE: usize = 4096;

/// How long one export request may take before it is given up.
const SEND_TIMEOUT: Duration = Duration::from_secs(5);

/// How long exit waits for the queued spans to be sent.
const FLUSH: Duration = Duration::from_secs(3);

/// The subscriber layer that exports spans, boxed for the log's
/// subscriber (`cmd::logging::init`), which it joins.
pub type OtelLayer = Box<dyn Layer<tracing_subscriber::Registry> + Send + Sync>;

/// The exporter while it runs; dropping it sends what is queued (within
/// [`FLUSH`]) and stops it.
pub struct Telemetry {
    provider: SdkTracerProvider,
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Err(e) = self.provider.shutdown_with_timeout(FLUSH) {
            tracing::warn!("OpenTelemetry: spans not sent at exit: {e}");
        }
    }
}

/// Starts the exporter to the collector at `url` (`http://` or
/// `https://`; `/v1/traces` is added unless the path already ends so):
/// the layer to add to the subscriber, and the guard that flushes it.
pub fn start(url: &str) -> Result<(OtelLayer, Telemetry), String> {
    let (endpoint, shown) = traces_endpoint(url)?;
    let client = OwnRuntime::new(shown).map_err(|e| format!("--otlp: {e}"))?;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(client)
        .with_endpoint(endpoint)
        .with_protocol(Protocol::HttpBinary)
        .with_timeout(SEND_TIMEOUT)
        .build()
        .map_err(|e| format!("--otlp {url}: {e}"))?;
    let batches = BatchConfigBuilder::default()
        .with_max_queue_size(QUEUE)
        .with_scheduled_delay(Duration::from_secs(2))
        .build();
    let processor = BatchSpanProcessor::builder(exporter)
        .with_batch_config(batches)
        .build();
    let provider = SdkTracerProvider::builder()
        .with_span_processor(processor)
        .with_resource(Resource::builder().with_service_name("hookhost").build())
        .build();
    let tracer = provider.tracer("hookhost");
    // hookhost's own spans (library and binary both are `hookhost::…`),
    // at info: the hook points and calls, whatever HOOKHOST_LOG says. Not
    // events: log lines (a hook's stderr among them) stay in the log.
    let only_ours = filter_fn(|meta| {
        let ours = meta.target() == "hookhost" || meta.target().starts_with("hookhost::");
        ours && meta.is_span() && *meta.level() <= Level::INFO
    });
    let layer = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_filter(only_ours);
    Ok((Box::new(layer), Telemetry { provider }))
}

/// The OTLP/HTTP traces URL for `--otlp URL`, and the collector as the
/// log names it (scheme, host and port: no userinfo).
fn traces_endpoint(url: &str) -> Result<(String, String), String> {
    let uri: hyper::Uri = url
        .parse()
        .map_err(|e| format!("--otlp {url}: not a URL: {e}"))?;
    let (Some(scheme @ ("http" | "https")), Some(host)) = (uri.scheme_str(), uri.host()) else {
        return Err(format!(
            "--otlp {url}: expected http://HOST:PORT or https://HOST:PORT"
        ));
    };
    let port = uri.port().map_or(String::new(), |p| format!(":{p}"));
    let shown = format!("{scheme}://{host}{port}");
    match uri.path().ends_with("/v1/traces") {
        true => Ok((url.to_string(), shown)),
        false => Ok((format!("{}/v1/traces", url.trim_end_matches('/')), shown)),
    }
}

/// The span a gateway's HTTP request is answered in: the parent of the
/// hook point's span. Its own parent is the W3C trace context of the
/// request's `traceparent` (and `tracestate`) header when it carries a
/// valid one; a missing or malformed one (untrusted input) starts a new
/// trace, never an error.
pub fn request_span(traceparent: Option<&[u8]>, tracestate: Option<&[u8]>) -> tracing::Span {
    let span = tracing::info_span!(
        "request",
        otel.name = "hookhost.request",
        otel.kind = "server"
    );
    if span.is_disabled() {
        return span;
    }
    let text = |v: Option<&[u8]>| {
        v.and_then(|v| std::str::from_utf8(v).ok())
            .map(str::to_string)
    };
    let carrier = Carrier {
        traceparent: text(traceparent),
        tracestate: text(tracestate),
    };
    let parent = TraceContextPropagator::new().extract(&carrier);
    if parent.span().span_context().is_valid() {
        // Fails only when no OpenTelemetry layer takes the span.
        let _ = span.set_parent(parent);
    }
    span
}

/// The two headers of W3C trace context, as the propagator reads them.
struct Carrier {
    traceparent: Option<String>,
    tracestate: Option<String>,
}

impl opentelemetry::propagation::Extractor for Carrier {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            "traceparent" => self.traceparent.as_deref(),
            "tracestate" => self.tracestate.as_deref(),
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        vec!["traceparent", "tracestate"]
    }
}

/// opentelemetry-http's hyper client (over rustls with ring, the roots
/// every TLS client of hookhost's trusts) run on a one-thread runtime of
/// its own: the SDK's batch thread has no tokio runtime, and the
/// gateway's must not carry exports. A collector that stops taking spans
/// is logged once (a warning), and again once it takes them again.
#[derive(Debug, Clone)]
struct OwnRuntime {
    client: HyperClient<hyper_rustls::HttpsConnector<HttpConnector>>,
    runtime: Arc<tokio::runtime::Runtime>,
    /// The collector, as the log names it (no path, no userinfo).
    shown: String,
    failing: Arc<AtomicBool>,
}

impl OwnRuntime {
    fn new(shown: String) -> Result<OwnRuntime, std::io::Error> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("hookhost-otlp")
            .enable_all()
            .build()?;
        let tls = crate::shared::remote::client_config().map_err(std::io::Error::other)?;
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config((*tls).clone())
            .https_or_http()
            .enable_http1()
            .build();
        let _in = runtime.enter();
        let client = HyperClient::new(connector, SEND_TIMEOUT, None);
        Ok(OwnRuntime {
            client,
            runtime: Arc::new(runtime),
            shown,
            failing: Arc::default(),
        })
    }

    /// Logs the first failure of a run of them, and the recovery.
    fn report(&self, failure: Option<String>) {
        match failure {
            Some(why) if !self.failing.swap(true, Ordering::Relaxed) => tracing::warn!(
                "OpenTelemetry: spans not delivered to {}: {why} (logged again once it takes them)",
                self.shown
            ),
            None if self.failing.swap(false, Ordering::Relaxed) => {
                tracing::warn!("OpenTelemetry: {} takes spans again", self.shown);
            }
            _ => {}
        }
    }
}

#[async_trait::async_trait]
impl HttpClient for OwnRuntime {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let client = self.client.clone();
        let sent = self
            .runtime
            .spawn(async move { client.send_bytes(request).await });
        let answer = sent.await.map_err(HttpError::from).and_then(|a| a);
        self.report(match &answer {
            Ok(r) if r.status().is_success() => None,
            Ok(r) => Some(format!("it answered {}", r.status())),
            Err(e) => Some(e.to_string()),
        });
        answer
    }
}
