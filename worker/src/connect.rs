//! Reaching the coordinator: the endpoint (plain or TLS), sessions opened
//! one after another, reconnecting with backoff until the job ends.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint};

use crate::error::{SessionError, WorkerError};
use crate::session::run_session;
use crate::{WorkerConfig, WorkerReport};

/// Runs until the job is finished or `shutdown` is cancelled. Lost connections
/// are retried with exponential backoff; refusals (token, versions) are not.
pub async fn run_worker(
    config: WorkerConfig,
    shutdown: CancellationToken,
) -> Result<WorkerReport, WorkerError> {
    let endpoint = endpoint(&config)?;
    let pool = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(config.threads.max(1))
            .thread_name(|i| format!("pregen-worker-{i}"))
            .build()
            .map_err(|source| WorkerError::Threads {
                threads: config.threads,
                source,
            })?,
    );
    let mut report = WorkerReport::default();
    // The identity the coordinator issued, kept across reconnects.
    let mut key = String::new();
    let mut backoff = Duration::from_millis(50);
    let mut unreachable_since: Option<Instant> = None;
    loop {
        if shutdown.is_cancelled() {
            report.drained = true;
            return Ok(report);
        }
        let connected = tokio::select! {
            connected = endpoint.connect() => connected,
            _ = shutdown.cancelled() => continue,
        };
        let error = match connected {
            Ok(channel) => {
                report.sessions += 1;
                let welcomed = report.welcomed;
                let ended = run_session(&config, channel, &pool, &shutdown, &mut report, &mut key);
                let lost = match ended.await.map_err(SessionError::into_worker_error) {
                    Ok(()) => return Ok(report),
                    Err(Ok(fatal)) => return Err(fatal),
                    Err(Err(lost)) => lost,
                };
                // A session that got going resets the backoff; one that never
                // got a Welcome (say, plain gRPC to a TLS port) counts as the
                // coordinator being unreachable.
                if report.welcomed > welcomed {
                    backoff = Duration::from_millis(50);
                    unreachable_since = None;
                }
                lost
            }
            Err(e) => SessionError::Connect(e),
        };
        let since = *unreachable_since.get_or_insert_with(Instant::now);
        if since.elapsed() >= config.connect_timeout {
            return Err(WorkerError::Unreachable {
                url: config.coordinator.clone(),
                within: config.connect_timeout,
                source: error,
            });
        }
        tracing::info!(error = with_causes(&error), retry_in = ?backoff, "coordinator unreachable; retrying");
        tokio::select! {
            _ = tokio::time::sleep(backoff) => {}
            _ = shutdown.cancelled() => {}
        }
        backoff = (backoff * 2).min(Duration::from_secs(2));
    }
}

/// An error and the errors beneath it, e.g. `transport error: invalid peer
/// certificate: UnknownIssuer`.
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        let cause = e.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
        source = e.source();
    }
    text
}

const CERT_BEGIN: &str = "-----BEGIN CERTIFICATE-----";

/// The coordinator's endpoint: plain for `http://`, TLS for `https://` (the
/// system's roots plus `tls_ca`).
pub(crate) fn endpoint(config: &WorkerConfig) -> Result<Endpoint, WorkerError> {
    let address = |source| WorkerError::Address {
        url: config.coordinator.clone(),
        source,
    };
    let unusable = |problem| WorkerError::Tls {
        url: config.coordinator.clone(),
        problem,
    };
    let endpoint = Endpoint::from_shared(config.coordinator.clone())
        .map_err(address)?
        .connect_timeout(Duration::from_secs(5))
        .tcp_nodelay(true);
    if !config.coordinator.starts_with("https://") {
        if config.tls_ca.is_some() || config.tls_identity.is_some() {
            return Err(unusable("TLS files were given but the URL is not https://"));
        }
        return Ok(endpoint);
    }
    let mut tls = ClientTlsConfig::new().with_native_roots();
    if let Some(pem) = &config.tls_ca {
        // Anything else would be dropped without a word, leaving only the
        // system's roots and an "unknown issuer" later.
        if !pem
            .windows(CERT_BEGIN.len())
            .any(|w| w == CERT_BEGIN.as_bytes())
        {
            return Err(unusable(
                "the TLS CA is not a PEM certificate (no `-----BEGIN CERTIFICATE-----` line)",
            ));
        }
        tls = tls.ca_certificate(Certificate::from_pem(pem));
    }
    if let Some((cert, key)) = &config.tls_identity {
        tls = tls.identity(tonic::transport::Identity::from_pem(cert, key));
    }
    endpoint.tls_config(tls).map_err(address)
}
