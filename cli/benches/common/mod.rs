//! What the benches share.

/// The middle value (the mean of the two middle ones for an even count).
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// A confidence interval of at least 95% for the median of what the values
/// were drawn from, free of any assumption about their distribution: the
/// k-th smallest and the k-th largest value, with k the largest for which
/// fewer than k values fall below the median (or above it) with probability
/// 2.5% at most each (a binomial of n draws at one half). `None` below six
/// values, too few for such an interval.
#[allow(dead_code)]
pub fn median_interval(values: &[f64]) -> Option<(f64, f64)> {
    let n = values.len();
    // P(X <= j) for X ~ Binomial(n, 1/2), summed term by term.
    let mut term = 0.5f64.powi(n as i32);
    let mut below = 0.0;
    let mut k = 0;
    for j in 0..n {
        below += term;
        if below > 0.025 {
            break;
        }
        // At most j values below the median has probability `below`, so the
        // (j + 1)-th smallest is below it with probability 97.5% at least.
        k = j + 1;
        term *= (n - j) as f64 / (j + 1) as f64;
    }
    if k == 0 {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    Some((sorted[k - 1], sorted[n - k]))
}

/// CPU seconds (user and system) this process's threads have used so far,
/// from `/proc/self/stat` (clock ticks, taken as 100 a second); `None` where
/// it cannot be read.
#[allow(dead_code)]
pub fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 here.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / 100.0)
}

/// Seconds on a CPU of each thread of this process alive now, by thread id,
/// with the thread's name: from `/proc/self/task/*/schedstat` (nanoseconds,
/// unlike the clock ticks of `stat`) and `comm`. Empty where it cannot be
/// read.
#[allow(dead_code)]
pub fn thread_cpu() -> std::collections::HashMap<u32, (String, f64)> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Default::default();
    };
    tasks
        .filter_map(|task| {
            let task = task.ok()?;
            let tid = task.file_name().to_str()?.parse::<u32>().ok()?;
            let schedstat = std::fs::read_to_string(task.path().join("schedstat")).ok()?;
            let ns = schedstat.split_whitespace().next()?.parse::<u64>().ok()?;
            let name = std::fs::read_to_string(task.path().join("comm")).ok()?;
            Some((tid, (name.trim_end().to_string(), ns as f64 / 1e9)))
        })
        .collect()
}

/// Runs `job` to its pack in `out` with two workers (`a` and `b`) of
/// `threads` threads each over loopback gRPC: what the run did, and its
/// wall-clock time.
#[allow(dead_code)]
pub async fn run_two_workers(
    job: pregen_coordinator::Job,
    threads: usize,
    out: std::path::PathBuf,
) -> (pregen_coordinator::server::RunSummary, std::time::Duration) {
    use pregen_coordinator::server::{RunOptions, Started, start_job};
    let started = std::time::Instant::now();
    let Started::Running(mut running) = start_job(
        job,
        RunOptions {
            lease_ttl: std::time::Duration::from_secs(30),
            ..RunOptions::local(out, "bench".into())
        },
    )
    .await
    .expect("starts") else {
        panic!("a new pack is not complete")
    };
    let workers: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|name| {
            let mut config = pregen_worker::WorkerConfig::new(
                format!("http://{}", running.listening.grpc),
                "bench",
            );
            config.threads = threads;
            config.name = name.into();
            tokio::spawn(pregen_worker::run_worker(
                config,
                tokio_util::sync::CancellationToken::new(),
            ))
        })
        .collect();
    let summary = running.complete().await.expect("run");
    for w in workers {
        w.await.expect("worker joins").expect("worker ends well");
    }
    running.stop().await;
    (summary, started.elapsed())
}
