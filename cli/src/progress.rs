//! The progress bar of `pregen run`: accepted levels against the count with
//! levels/s and the ETA, then seeds/s, the workers with the seeds each has
//! returned, the leases out, and the seeds not accepted by reason; once every
//! level is in, the pack's writing: the seeds' records sorted, then the
//! levels written to their tiers against the count.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pregen_coordinator::server::JobWatch;
use tokio::task::JoinHandle;

/// A progress bar following a running job, redrawn four times a second.
pub struct ProgressView {
    bar: ProgressBar,
    task: JoinHandle<()>,
}

impl ProgressView {
    /// Starts following `watch` (drawn on stderr when `visible`).
    pub fn start(pack: &str, count: u64, visible: bool, watch: JobWatch) -> Self {
        let bar = progress_bar(pack, count, visible);
        let task = tokio::spawn(show_progress(watch, bar.clone()));
        Self { bar, task }
    }

    /// Stops and clears the bar.
    pub fn finish(self) {
        self.task.abort();
        self.bar.finish_and_clear();
    }
}

fn progress_bar(pack: &str, count: u64, visible: bool) -> ProgressBar {
    let target = if visible {
        ProgressDrawTarget::stderr_with_hz(4)
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(Some(count), target);
    bar.set_style(style("accepted"));
    bar.set_prefix(pack.to_string());
    bar
}

/// The bar's look, its count naming what it counts.
fn style(counted: &str) -> ProgressStyle {
    ProgressStyle::with_template(&format!(
        "{{spinner}} {{prefix}} [{{bar:30}}] {{pos}}/{{len}} {counted} ({{levels_per_sec}}, eta {{eta}})\n  {{wide_msg}}"
    ))
    .map(|style| {
        style.with_key(
            "levels_per_sec",
            |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.0} levels/s", state.per_sec());
            },
        )
    })
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ")
}

async fn show_progress(watch: JobWatch, bar: ProgressBar) {
    let started = Instant::now();
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    let mut writing = false;
    loop {
        tick.tick().await;
        let (records, levels) = (watch.writing().records(), watch.writing().levels());
        if records > 0 {
            // Every level is in: the pack's files are being written.
            if !writing {
                writing = true;
                bar.set_style(style("levels written"));
                bar.reset_eta();
            }
            bar.set_position(levels.min(bar.length().unwrap_or(u64::MAX)));
            bar.set_message(if levels == 0 {
                format!("writing the pack: {records} seeds' records sorted")
            } else {
                "writing the pack: levels in difficulty order into their tiers' files".to_string()
            });
            continue;
        }
        let p = watch.progress();
        bar.set_position(p.accepted.min(bar.length().unwrap_or(u64::MAX)));
        let rate = p.seeds as f64 / started.elapsed().as_secs_f64().max(1e-3);
        let rejected: Vec<String> = p.rejected.iter().map(|(k, v)| format!("{k} {v}")).collect();
        // Seeds per worker, busiest first; a long list is cut to the first eight.
        let mut workers: Vec<(&String, &u64)> = p.per_worker.iter().collect();
        workers.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
        let mut per_worker: Vec<String> = workers
            .iter()
            .take(8)
            .map(|(name, n)| format!("{name} {n}"))
            .collect();
        if workers.len() > 8 {
            per_worker.push(format!("and {} more", workers.len() - 8));
        }
        bar.set_message(format!(
            "{:.0} seeds/s | {} workers ({}), {} leases out | not accepted: {}",
            rate,
            p.per_worker.len(),
            if per_worker.is_empty() {
                "no seeds yet".into()
            } else {
                per_worker.join(", ")
            },
            p.leases_out,
            if rejected.is_empty() {
                "none".into()
            } else {
                rejected.join(", ")
            },
        ));
    }
}
