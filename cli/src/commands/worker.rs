//! `pregen worker`: lease seed ranges from a coordinator and run them.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use pregen_worker::{WorkerConfig, run_worker};

/// Flags of `pregen worker`.
#[derive(Args)]
pub struct WorkerArgs {
    /// Coordinator URL.
    #[arg(long, env = "PREGEN_COORDINATOR")]
    coordinator: String,
    /// Shared token.
    #[arg(long, env = "PREGEN_TOKEN", hide_env_values = true)]
    token: String,
    /// Threads for candidates (default: all cores; more than the cores is
    /// capped at them, with a warning).
    #[arg(long)]
    threads: Option<usize>,
    /// Name stored in the `worker` column (default: host-pid).
    #[arg(long)]
    name: Option<String>,
    /// Give up when the coordinator is unreachable this long (seconds).
    #[arg(long, default_value_t = 60)]
    connect_timeout_s: u64,
    /// For an `https://` coordinator: a CA certificate (PEM) to trust
    /// besides the system's roots.
    #[arg(long, value_name = "PEM")]
    tls_ca: Option<PathBuf>,
    /// For a coordinator that asks for client certificates
    /// (`serve --tls-client-ca`): this worker's certificate (PEM).
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The client certificate's private key (PEM).
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// For a job whose game is a program (`game = "external"`): the folder
    /// holding this node's copy of it (default: the folder the job names).
    /// Its files must hash to the job's `external.identity`.
    #[arg(long, value_name = "DIR", env = "PREGEN_PROGRAM_DIR")]
    program_dir: Option<PathBuf>,
}

/// Runs the worker until its job is finished or SIGTERM has drained it.
pub async fn run(args: WorkerArgs) -> Result<()> {
    crate::init_logs("info");
    let mut config = WorkerConfig::new(args.coordinator, args.token);
    if let Some(path) = &args.tls_ca {
        config.tls_ca = Some(super::read_file(path)?);
    }
    if let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) {
        config.tls_identity = Some((super::read_file(cert)?, super::read_file(key)?));
    }
    if let Some(asked) = args.threads {
        config.threads = super::threads_within_cores(asked)?;
    }
    if let Some(n) = args.name {
        config.name = n;
    }
    config.connect_timeout = Duration::from_secs(args.connect_timeout_s);
    config.program_dir = args.program_dir;
    let report = run_worker(config, crate::cancel_on_signals()).await?;
    eprintln!(
        "worker done: {} results, {} leases, {} sessions{}",
        report.results,
        report.leases,
        report.sessions,
        if report.drained {
            " (drained on shutdown)"
        } else {
            ""
        }
    );
    Ok(())
}
