//! A pack in an object store (`serve --out s3://bucket/prefix`): the
//! coordinator works in a local folder as ever, and the store holds what
//! must outlive it.
//!
//! - **The lease.** `commit/LEASE` is taken before anything is read
//!   ([`pregen_store::Lease`]: a create-only put, renewed every third of
//!   its length with a put conditional on this holder's last version). A
//!   coordinator that finds it held waits for it to expire (its holder
//!   died) for one lease length, then gives up naming the holder. One that
//!   loses it (it renewed too late and another took it) stops: the run is
//!   cancelled and nothing is published.
//! - **The log.** What a resume needs (`_SUCCESS`, `manifest.json`, the
//!   log's `job.json`, its key and its segments) is copied into the working
//!   folder first, so a coordinator started anywhere with an empty disk
//!   resumes from the bucket alone. Every segment the log writes is put
//!   create-only as well ([`CommitLog::mirror_to`]): a segment is never
//!   replaced, so a second writer is refused by the store itself.
//! - **The pack.** Written in the working folder, then published: the old
//!   `_SUCCESS` and manifest deleted first, every other file uploaded whole
//!   (objects of an earlier pack the new one lacks deleted), then
//!   `manifest.json`, then `_SUCCESS`, so a reader that sees `_SUCCESS`
//!   sees the whole pack.

use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use pregen_pack::dir::{MANIFEST, OUTPUTS, SUCCESS};
use pregen_pack::write::Delivery;
use pregen_pack::{PackDir, PackError};
use pregen_store::{Lease, LeaseError, Remote};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::CoordinatorError;
use crate::commit_log::CommitLog;

/// The lease object, below the pack's prefix.
const LEASE: &str = "commit/LEASE";
/// The commit log's prefix, below the pack's.
const COMMIT: &str = "commit";

/// The pack's prefix in the store, leased by this coordinator.
#[derive(Debug)]
pub(crate) struct InStore {
    remote: Remote,
    lease: Arc<Mutex<Option<Lease>>>,
    renewal: JoinHandle<()>,
    lost: Arc<OnceLock<String>>,
}

impl InStore {
    /// Takes the lease on the pack at `remote` (waiting at most one lease
    /// length for a dead holder's to expire), keeps it renewed, and copies
    /// what a resume needs into `dir`. Losing the lease cancels `shutdown`.
    pub(crate) async fn open(
        remote: Remote,
        dir: &PackDir,
        ttl: Duration,
        shutdown: CancellationToken,
    ) -> Result<InStore, CoordinatorError> {
        let lease = {
            let remote = remote.clone();
            blocking(move || take_lease(&remote, ttl)).await??
        };
        let every = lease.renew_every();
        let lease = Arc::new(Mutex::new(Some(lease)));
        let lost = Arc::new(OnceLock::new());
        let renewal = tokio::spawn(keep(lease.clone(), every, lost.clone(), shutdown));
        let store = InStore {
            remote,
            lease,
            renewal,
            lost,
        };
        let (remote, root) = (store.remote.clone(), dir.root().to_path_buf());
        blocking(move || fetch(&remote, &root)).await??;
        Ok(store)
    }

    /// The store of a run whose options name one, opened for its pack.
    pub(crate) async fn for_run(
        options: &crate::server::RunOptions,
        job: &crate::Job,
        dir: &PackDir,
    ) -> Result<Option<InStore>, CoordinatorError> {
        let Some(root) = &options.store else {
            return Ok(None);
        };
        let remote = root.child(&job.pack);
        let shutdown = options.shutdown.clone();
        Ok(Some(
            InStore::open(remote, dir, options.store_lease, shutdown).await?,
        ))
    }

    /// `log`, kept in the store from now on ([`CommitLog::mirror_to`]).
    pub(crate) async fn keep_log(&self, mut log: CommitLog) -> Result<CommitLog, CoordinatorError> {
        let commit = self.remote.child(COMMIT);
        blocking(move || log.mirror_to(commit).map(|()| log)).await?
    }

    /// The pack's URL.
    pub(crate) fn url(&self) -> String {
        self.remote.url()
    }

    /// Why the lease was lost, if it was.
    pub(crate) fn lost(&self) -> Option<CoordinatorError> {
        self.lost
            .get()
            .map(|why| CoordinatorError::Fenced(why.clone()))
    }

    /// What takes each pack file as it is written: uploaded whole, then
    /// removed from the working folder, so the local disk holds only the
    /// files being written. The old `_SUCCESS` and manifest are deleted
    /// first: the store never shows a pack that is half old, half new as
    /// finished.
    pub(crate) async fn delivery(&self) -> Result<Delivery, CoordinatorError> {
        let remote = self.remote.clone();
        blocking(move || {
            remote.delete(SUCCESS)?;
            remote.delete(MANIFEST)
        })
        .await??;
        let remote = self.remote.clone();
        Ok(Delivery(Arc::new(move |root: &Path, name: &str| {
            let path = root.join(name);
            remote
                .upload(&path, name)
                .map_err(|e| PackError::io("upload", &path)(std::io::Error::other(e)))?;
            std::fs::remove_file(&path).map_err(PackError::io("remove", &path))
        })))
    }

    /// Publishes the pack written in `dir`, after renewing the lease one
    /// last time (a coordinator that lost it publishes nothing).
    pub(crate) async fn publish(&self, dir: &PackDir) -> Result<(), CoordinatorError> {
        let (remote, dir, lease) = (self.remote.clone(), dir.clone(), self.lease.clone());
        blocking(move || {
            let mut held = lease.lock().unwrap_or_else(|p| p.into_inner());
            match held.as_mut() {
                Some(lease) => lease.renew().map_err(fenced)?,
                None => return Err(CoordinatorError::Fenced("the lease was given up".into())),
            }
            drop(held);
            publish(&remote, &dir)
        })
        .await?
    }

    /// Stops renewing and gives the lease up.
    pub(crate) async fn release(self) {
        self.renewal.abort();
        let lease = self.lease.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(lease) = lease {
            let _ = blocking(move || lease.release()).await;
        }
    }
}

impl Drop for InStore {
    fn drop(&mut self) {
        self.renewal.abort();
    }
}

/// Takes the lease, waiting for a dead holder's to expire.
fn take_lease(remote: &Remote, ttl: Duration) -> Result<Lease, CoordinatorError> {
    let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "this host".into());
    // The start's time tells apart two coordinators of one pid and host
    // (pid 1 in two containers of one pod name).
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let holder = format!("pid {} on {host}, started {started:x}", std::process::id());
    let give_up = std::time::Instant::now() + ttl + Duration::from_secs(2);
    loop {
        match Lease::take(remote, LEASE, holder.clone(), ttl) {
            Ok(lease) => return Ok(lease),
            Err(LeaseError::Held {
                left_ms,
                holder: other,
                ..
            }) if std::time::Instant::now() + Duration::from_millis(left_ms) < give_up => {
                tracing::warn!(
                    holder = other,
                    left_ms,
                    url = remote.url_of(LEASE),
                    "the pack's lease is held; waiting for it to expire"
                );
                std::thread::sleep(Duration::from_millis(left_ms + 100));
            }
            Err(e) => return Err(fenced(e)),
        }
    }
}

/// Renews the lease every `every` until it is lost (then cancels the run).
async fn keep(
    lease: Arc<Mutex<Option<Lease>>>,
    every: Duration,
    lost: Arc<OnceLock<String>>,
    shutdown: CancellationToken,
) {
    loop {
        tokio::time::sleep(every).await;
        let lease = lease.clone();
        let renewed = blocking(move || {
            let mut held = lease.lock().unwrap_or_else(|p| p.into_inner());
            held.as_mut().map_or(Ok(()), Lease::renew)
        })
        .await;
        match renewed {
            Ok(Ok(())) => {}
            // A store that does not answer: try again; the lease may still hold.
            Ok(Err(LeaseError::Store(error))) => {
                tracing::warn!(%error, "the pack's lease could not be renewed; trying again");
            }
            Ok(Err(e)) => {
                tracing::error!(error = %e, "the pack's lease is lost; stopping");
                let _ = lost.set(e.to_string());
                shutdown.cancel();
                return;
            }
            Err(_) => return,
        }
    }
}

/// Copies `_SUCCESS`, the manifest and the commit log into `root`.
fn fetch(remote: &Remote, root: &Path) -> Result<(), CoordinatorError> {
    let objects = remote.download_all(root, |o| {
        let name = o.name.as_str();
        name == SUCCESS
            || name == MANIFEST
            || (name.starts_with("commit/") && name != LEASE && !name.ends_with("/LOCK"))
    })?;
    if !objects.is_empty() {
        tracing::info!(
            objects = objects.len(),
            url = remote.url(),
            "copied the pack's log from the store"
        );
    }
    Ok(())
}

/// Uploads what is left of the pack written in `dir` (the files the
/// delivery did not take), deletes the objects of an earlier pack the new
/// one lacks, then uploads the manifest, then `_SUCCESS`.
fn publish(remote: &Remote, dir: &PackDir) -> Result<(), CoordinatorError> {
    let root = dir.root();
    let manifest = dir.read_manifest()?;
    let names: Vec<&String> = manifest.files.keys().collect();
    for name in &names {
        let path = root.join(name.as_str());
        if path.exists() {
            remote.upload(&path, name)?;
        }
    }
    let stale: Vec<String> = remote
        .list()?
        .into_iter()
        .map(|o| o.name)
        .filter(|name| {
            let top = name.split('/').next().unwrap_or_default();
            OUTPUTS.contains(&top) && ![SUCCESS, MANIFEST].contains(&top) && !names.contains(&name)
        })
        .collect();
    for name in &stale {
        remote.delete(name)?;
    }
    remote.upload(&root.join(MANIFEST), MANIFEST)?;
    remote.upload(&root.join(SUCCESS), SUCCESS)?;
    tracing::info!(
        files = names.len() + 2,
        url = remote.url(),
        "published the pack"
    );
    Ok(())
}

fn fenced(e: LeaseError) -> CoordinatorError {
    match e {
        LeaseError::Store(e) => e.into(),
        other => CoordinatorError::Fenced(other.to_string()),
    }
}

/// Runs blocking store calls off the async threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, CoordinatorError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| CoordinatorError::server("the object store")(e.into()))
}
