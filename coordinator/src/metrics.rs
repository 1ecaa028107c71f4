//! Prometheus metrics of a running job, served over HTTP at `/metrics`
//! (`pregen serve --metrics ADDR`, `pregen run --metrics ADDR`).
//!
//! The listener is bounded like the workers' ([`crate::connections`]): at
//! most [`METRICS_CONNECTIONS`] open, each closed after
//! [`METRICS_CONNECTION_LIFE`], so clients that connect and stay silent
//! cannot take the descriptors the commit log needs.
//!
//! Every scrape reads one snapshot of the scheduler's counters (the figures of
//! the progress bar), so the metrics cost nothing between scrapes. Rates come
//! from Prometheus: `rate(pregen_accepted_total[1m])` is accepted levels per second.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::get;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::CoordinatorError;
use crate::connections::{CappedListener, METRICS_CONNECTION_LIFE, METRICS_CONNECTIONS};
use crate::shared::Shared;

/// The job's counters, read on each scrape.
#[derive(Debug)]
struct JobCollector {
    shared: Arc<Shared>,
    wanted: u64,
}

impl Collector for JobCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let p = self.shared.scheduler().progress();
        let gauges = [
            (
                "pregen_levels_wanted",
                "Accepted levels the job asks for.",
                self.wanted,
            ),
            (
                "pregen_levels_committed",
                "Levels of the pack that are in: accepted seeds in the complete seed-order prefix.",
                p.committed,
            ),
            (
                "pregen_leases_out",
                "Seed ranges leased to workers now.",
                p.leases_out as u64,
            ),
            (
                "pregen_workers_connected",
                "Worker sessions open now.",
                p.sessions as u64,
            ),
            (
                "pregen_worker_threads",
                "Threads of the worker sessions open now.",
                p.threads,
            ),
        ];
        for (name, help, value) in gauges {
            ConstGauge::new(value as i64).encode(encoder.encode_descriptor(
                name,
                help,
                None,
                MetricType::Gauge,
            )?)?;
        }
        let counters = [
            ("pregen_seeds", "Seeds with a recorded result.", p.seeds),
            (
                "pregen_accepted",
                "Seeds accepted (duplicates included).",
                p.accepted,
            ),
            (
                "pregen_mismatches",
                "Results that disagreed with an earlier result for the same seed.",
                p.mismatches,
            ),
            (
                "pregen_speculative_leases",
                "Leases issued again, while still out, to an idle worker at the tail of a run.",
                p.speculative,
            ),
            (
                "pregen_duplicate_results",
                "Results for seeds already recorded (re-issued and speculative leases).",
                p.duplicate_results,
            ),
            (
                "pregen_cross_check_confirmed",
                "Sampled seeds whose result a second, independent run confirmed.",
                p.cross_check.confirmed,
            ),
            (
                "pregen_cross_check_disputes",
                "Seeds whose results disagreed, settled by the coordinator's own run.",
                p.cross_check.disputes,
            ),
            (
                "pregen_workers_refused",
                "Workers refused because their results disagreed with the coordinator's.",
                p.cross_check.refused.len() as u64,
            ),
        ];
        for (name, help, value) in counters {
            ConstCounter::new(value).encode(encoder.encode_descriptor(
                name,
                help,
                None,
                MetricType::Counter,
            )?)?;
        }
        encode_families(&p, &mut encoder)
    }
}

/// The metrics with labels: refusals by status and reason, results by
/// worker.
fn encode_families(
    p: &crate::scheduler::Progress,
    encoder: &mut DescriptorEncoder,
) -> Result<(), std::fmt::Error> {
    let mut rejected = encoder.encode_descriptor(
        "pregen_rejected",
        "Seeds not accepted, by status and reason code.",
        None,
        MetricType::Counter,
    )?;
    for (refusal, &count) in &p.rejected {
        let reason = refusal.code.map_or("", |c| c.as_str());
        let labels = [("status", refusal.status.as_str()), ("reason", reason)];
        ConstCounter::new(count).encode(rejected.encode_family(&labels)?)?;
    }
    let mut per_worker = encoder.encode_descriptor(
        "pregen_worker_results",
        "Results received, by worker identity (NAME#ID).",
        None,
        MetricType::Counter,
    )?;
    for (worker, &count) in &p.per_worker {
        let labels = [("worker", label(worker))];
        ConstCounter::new(count).encode(per_worker.encode_family(&labels)?)?;
    }
    Ok(())
}

/// A label value as the exposition format writes it: `\\`, `"` and line
/// feeds escaped (the encoder writes values as given, and a worker name comes
/// from a worker), so no value can end its label or its line.
fn label(value: &str) -> std::borrow::Cow<'_, str> {
    if !value.contains(['\\', '"', '\n']) {
        return value.into();
    }
    let mut escaped = String::with_capacity(value.len() + 8);
    for c in value.chars() {
        match c {
            '\\' => escaped.push_str("\\\\"),
            '"' => escaped.push_str("\\\""),
            '\n' => escaped.push_str("\\n"),
            c => escaped.push(c),
        }
    }
    escaped.into()
}

/// Binds the metrics listener on `addr` (before anything is written, so a
/// busy port stops a run at once).
pub async fn bind_metrics(addr: SocketAddr) -> Result<TcpListener, CoordinatorError> {
    TcpListener::bind(addr)
        .await
        .map_err(|e| CoordinatorError::server(format!("cannot serve metrics on {addr}"))(e.into()))
}

/// Serves `/metrics` on `listener` until `stop`; returns the bound address.
pub async fn serve_metrics(
    listener: TcpListener,
    shared: Arc<Shared>,
    wanted: u64,
    stop: CancellationToken,
) -> Result<SocketAddr, CoordinatorError> {
    let bound = listener
        .local_addr()
        .map_err(|e| CoordinatorError::server("metrics address")(e.into()))?;
    let mut registry = Registry::default();
    registry.register_collector(Box::new(JobCollector { shared, wanted }));
    let registry = Arc::new(registry);
    let app = Router::new().route(
        "/metrics",
        get(move || {
            let registry = registry.clone();
            async move { scrape(&registry) }
        }),
    );
    let listener = CappedListener::new(listener, METRICS_CONNECTIONS, METRICS_CONNECTION_LIFE)
        .map_err(|e| CoordinatorError::server("metrics address")(e.into()))?;
    tokio::spawn(async move {
        let served = axum::serve(listener, app)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await;
        if let Err(e) = served {
            tracing::warn!(error = %e, "metrics server stopped");
        }
    });
    Ok(bound)
}

fn scrape(registry: &Registry) -> axum::response::Response {
    let mut body = String::new();
    match prometheus_client::encoding::text::encode(&mut body, registry) {
        Ok(()) => (
            [(
                CONTENT_TYPE,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            )],
            body,
        )
            .into_response(),
        Err(_) => (
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            "cannot encode metrics",
        )
            .into_response(),
    }
}
