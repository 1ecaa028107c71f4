//! `pregen serve`: serve a job to remote workers until the pack is written.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};
use clap::Args;
use pregen_coordinator::server::{
    DEFAULT_LEASE_TTL, DEFAULT_MAX_CONNECTIONS, RunOptions, ServerTls, Started, start_job,
};

use crate::flags::JobArgs;

/// Flags of `pregen serve`.
#[derive(Args)]
pub struct ServeArgs {
    #[command(flatten)]
    job: JobArgs,
    /// Address to listen on.
    #[arg(long, default_value = "0.0.0.0:50051")]
    listen: SocketAddr,
    /// Shared token workers must present.
    #[arg(long, env = "PREGEN_TOKEN", hide_env_values = true)]
    token: String,
    /// Re-issue a lease not heard of for this long (ms).
    #[arg(long, default_value_t = DEFAULT_LEASE_TTL.as_millis() as u64,
          value_parser = clap::value_parser!(u64).range(100..=86_400_000))]
    lease_ttl_ms: u64,
    /// Serve Prometheus metrics at http://ADDR/metrics (e.g. 0.0.0.0:9100).
    #[arg(long, value_name = "ADDR")]
    metrics: Option<SocketAddr>,
    /// Serve gRPC over TLS with this certificate chain (PEM, leaf first);
    /// workers then connect to `https://HOST:PORT`.
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The TLS certificate's private key (PEM).
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Ask every worker for a TLS client certificate this CA signed (PEM):
    /// a per-worker credential beside the token. A worker's identity is then
    /// its certificate's (`NAME#ID`, ID from the certificate's SHA-256), so
    /// a refused certificate stays refused under any name.
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    tls_client_ca: Option<PathBuf>,
    /// Connections open at once; past it new ones are closed with a log
    /// line. Keep it under the process's file limit (`ulimit -n`).
    #[arg(long, default_value_t = DEFAULT_MAX_CONNECTIONS,
          value_parser = at_least_one)]
    max_connections: usize,
    /// Stop with an error (exit status 1, the commit log kept for a resume)
    /// after this many seconds with no worker connected. Without it the
    /// coordinator waits, saying every 30 s how long it has waited.
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    idle_exit_s: Option<u64>,
    /// While commit-log writes fail (e.g. a full disk) they are retried, no
    /// new leases granted, for this many seconds; then the run stops with an
    /// error (exit status 1) and a rerun resumes from what was written.
    #[arg(long, value_name = "SECONDS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..))]
    write_give_up_s: u64,
}

/// Serves the job; prints `listening on ADDR` once workers may connect.
pub async fn run(args: ServeArgs) -> Result<()> {
    crate::init_logs("info");
    // The program's game is held while serving: its program starts once.
    let (job, _program) = args.job.load()?;
    if args.token.is_empty() {
        bail!("--token (or PREGEN_TOKEN) must not be empty");
    }
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(ServerTls {
            cert: super::read_file(cert)?,
            key: super::read_file(key)?,
            client_ca: args
                .tls_client_ca
                .as_deref()
                .map(super::read_file)
                .transpose()?,
        }),
        _ => None,
    };
    let output = args.job.output()?;
    let options = RunOptions {
        listen: args.listen,
        lease_ttl: Duration::from_millis(args.lease_ttl_ms),
        metrics: args.metrics,
        tls,
        shutdown: crate::cancel_on_signals(),
        max_connections: args.max_connections,
        idle_exit: args.idle_exit_s.map(Duration::from_secs),
        write_give_up: Duration::from_secs(args.write_give_up_s),
        ..args.job.run_options(&output, args.token.clone())
    };
    let mut running = match start_job(job, options).await? {
        Started::AlreadyComplete(summary) => {
            super::report(&summary);
            return Ok(());
        }
        Started::Running(running) => running,
    };
    println!("listening on {}", running.listening.grpc);
    if let Some(m) = running.listening.metrics {
        println!("metrics on http://{m}/metrics");
    }
    let summary = running.complete().await;
    running.stop().await;
    super::report(&summary?);
    Ok(())
}

/// A count of at least 1.
fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}
