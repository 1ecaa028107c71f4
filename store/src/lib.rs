//! Where a pack lives: a local folder, or a prefix in an object store named
//! by URL (`s3://bucket/prefix`, `gs://…`, `az://…`/`abfs://…`), reached
//! through the `object_store` crate.
//!
//! - [`Location`]: a command's pack argument, parsed: a plain path or a
//!   `file://` URL is a folder as ever; a cloud URL is a [`Remote`].
//! - [`Remote`]: a prefix in a bucket, with the few operations a pack needs
//!   (list, read, download, upload whole, create-only put, delete), each
//!   blocking the calling thread, so the pack's synchronous writers and
//!   readers call them as they call the file system. Their futures run on
//!   one small runtime of the store's own (`runtime`), so a caller inside
//!   another tokio runtime may call them too.
//! - [`lease`]: the lease object that keeps two coordinators apart.
//!
//! Credentials are found the standard way for each cloud (the builders'
//! `from_env`): for S3 the `AWS_*` variables (`AWS_ENDPOINT_URL` included),
//! web identity (EKS), the container and instance metadata; for GCS
//! `GOOGLE_APPLICATION_CREDENTIALS`/`GOOGLE_SERVICE_ACCOUNT`; for Azure the
//! `AZURE_STORAGE_*` variables. An `http://` endpoint is allowed when the
//! endpoint variable names one (a test server, or one inside the cluster).
//! Requests are retried with backoff by the store's client (up to 10 times
//! within 3 minutes), so a store that answers 503 or restarts is waited for.

pub mod lease;
pub mod testing;
mod transfer;

use std::fmt;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use futures_util::TryStreamExt;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutPayload};

pub use lease::{Lease, LeaseError};
pub use transfer::PART_BYTES;

/// What went wrong with a store, naming the URL it concerns.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The argument is not a location pregen can use.
    #[error("{url}: {reason}")]
    BadUrl {
        /// The argument as given.
        url: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// The store refused or failed a request (after its retries).
    #[error("{url}: cannot {action}: {}", cause(error))]
    Request {
        /// The object's (or prefix's) URL.
        url: String,
        /// What was asked: `read`, `write`, `list`, `delete`.
        action: &'static str,
        /// The store's error.
        error: object_store::Error,
    },
    /// A local file on the way to or from the store.
    #[error("{path}: cannot {action}: {source}")]
    Local {
        /// The local file.
        path: PathBuf,
        /// What was done with it.
        action: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// The store's runtime stopped before answering (the process is ending).
    #[error("{url}: the object store's runtime stopped")]
    Stopped {
        /// The object's URL.
        url: String,
    },
}

impl StoreError {
    /// Whether the store said there is no such object.
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            StoreError::Request {
                error: object_store::Error::NotFound { .. },
                ..
            }
        )
    }
}

/// A command's pack (or output root) argument: a local folder or a prefix in
/// an object store.
#[derive(Debug, Clone)]
pub enum Location {
    /// A folder on a file system (a plain path, or a `file://` URL).
    Local(PathBuf),
    /// A prefix in an object store.
    Remote(Remote),
}

/// The URL schemes pregen reads and writes, for messages.
pub const SCHEMES: &str = "s3://, gs://, az://, abfs://, file:// or a plain path";

impl Location {
    /// Parses a plain path or a URL. A scheme pregen does not know is
    /// refused, naming the ones it does; a cloud URL's store is built (its
    /// credentials looked up) but not yet asked anything.
    pub fn parse(text: &str) -> Result<Location, StoreError> {
        let bad = |reason: String| StoreError::BadUrl {
            url: text.to_string(),
            reason,
        };
        let Some((scheme, _)) = text.split_once("://") else {
            return Ok(Location::Local(PathBuf::from(text)));
        };
        if scheme == "file" {
            let url = url::Url::parse(text).map_err(|e| bad(e.to_string()))?;
            let path = url
                .to_file_path()
                .map_err(|()| bad("not a local path".into()))?;
            return Ok(Location::Local(path));
        }
        Remote::parse(text).map(Location::Remote)
    }

    /// The location `name` below this one (a pack under an output root).
    pub fn join(&self, name: &str) -> Location {
        match self {
            Location::Local(path) => Location::Local(path.join(name)),
            Location::Remote(remote) => Location::Remote(remote.child(name)),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Local(path) => write!(f, "{}", path.display()),
            Location::Remote(remote) => write!(f, "{}", remote.url()),
        }
    }
}

impl std::str::FromStr for Location {
    type Err = StoreError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Location::parse(s)
    }
}

/// A prefix in an object store: `s3://bucket/prefix` and what it holds.
#[derive(Clone)]
pub struct Remote {
    store: Arc<dyn ObjectStore>,
    /// The prefix inside the bucket (empty for the bucket's root).
    prefix: ObjectPath,
    /// `scheme://bucket`, without a trailing slash.
    base: String,
}

impl fmt::Debug for Remote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Remote").field(&self.url()).finish()
    }
}

/// An object under a [`Remote`]: its name below the prefix and its size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object {
    /// The name below the prefix, `/`-separated (`levels/tier-01-part-00000.parquet`).
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
}

impl Remote {
    /// The store a cloud URL names, its credentials found the standard way.
    pub fn parse(text: &str) -> Result<Remote, StoreError> {
        Self::with_options(text, &[])
    }

    /// The store a cloud URL names, with `options` (the environment
    /// variables' names, e.g. `AWS_ENDPOINT_URL`) over the environment.
    pub fn with_options(text: &str, options: &[(&str, String)]) -> Result<Remote, StoreError> {
        let bad = |reason: String| StoreError::BadUrl {
            url: text.to_string(),
            reason,
        };
        let url = url::Url::parse(text).map_err(|e| bad(e.to_string()))?;
        let bucket = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| bad("the URL names no bucket".into()))?;
        let base = format!("{}://{bucket}", url.scheme());
        // The TLS provider the HTTP client uses (ring, as tonic's), before
        // the client is built.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let store = build(&url, options).map_err(|e| bad(e.to_string()))?;
        let prefix = ObjectPath::parse(url.path().trim_matches('/'))
            .map_err(|e| bad(format!("not a usable prefix: {e}")))?;
        Ok(Remote {
            store,
            prefix,
            base,
        })
    }

    /// The prefix `name` below this one.
    pub fn child(&self, name: &str) -> Remote {
        let mut prefix = self.prefix.clone();
        for part in name.split('/').filter(|p| !p.is_empty()) {
            prefix = prefix.join(part);
        }
        Remote {
            prefix,
            ..self.clone()
        }
    }

    /// The prefix's URL, `s3://bucket/prefix`.
    pub fn url(&self) -> String {
        if self.prefix.as_ref().is_empty() {
            self.base.clone()
        } else {
            format!("{}/{}", self.base, self.prefix)
        }
    }

    /// The URL of the object `name` below the prefix.
    pub fn url_of(&self, name: &str) -> String {
        if name.is_empty() {
            self.url()
        } else {
            format!("{}/{}", self.url(), name)
        }
    }

    fn path(&self, name: &str) -> ObjectPath {
        let mut path = self.prefix.clone();
        for part in name.split('/').filter(|p| !p.is_empty()) {
            path = path.join(part);
        }
        path
    }

    /// Every object below the prefix, sorted by name.
    pub fn list(&self) -> Result<Vec<Object>, StoreError> {
        let (store, prefix) = (self.store.clone(), self.prefix.clone());
        let depth = prefix.parts().count();
        let listed = self.patiently("", "list", move || {
            let (store, prefix) = (store.clone(), prefix.clone());
            async move { store.list(Some(&prefix)).try_collect::<Vec<_>>().await }
        })?;
        let mut objects: Vec<Object> = listed
            .into_iter()
            .map(|meta| Object {
                name: meta
                    .location
                    .parts()
                    .skip(depth)
                    .map(|p| p.as_ref().to_string())
                    .collect::<Vec<_>>()
                    .join("/"),
                size: meta.size,
            })
            .collect();
        objects.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(objects)
    }

    /// The object `name`, or `None` when there is none.
    pub fn read(&self, name: &str) -> Result<Option<Bytes>, StoreError> {
        let (store, path) = (self.store.clone(), self.path(name));
        self.patiently(name, "read", move || {
            let (store, path) = (store.clone(), path.clone());
            async move {
                match store.get(&path).await {
                    Ok(result) => result.bytes().await.map(Some),
                    Err(object_store::Error::NotFound { .. }) => Ok(None),
                    Err(e) => Err(e),
                }
            }
        })
    }

    /// Writes `bytes` as the object `name`, replacing any.
    pub fn write(&self, name: &str, bytes: Vec<u8>) -> Result<(), StoreError> {
        let (store, path, payload) = (self.store.clone(), self.path(name), Bytes::from(bytes));
        self.patiently(name, "write", move || {
            let (store, path, payload) = (store.clone(), path.clone(), payload.clone());
            async move { store.put(&path, PutPayload::from(payload)).await.map(drop) }
        })
    }

    /// Writes `bytes` as the object `name` only if there is none yet (a
    /// conditional put): `Ok(false)` when one is there already (which may
    /// be this very write, landed though its answer was lost: compare).
    pub fn create(&self, name: &str, bytes: Vec<u8>) -> Result<bool, StoreError> {
        let (store, path, payload) = (self.store.clone(), self.path(name), Bytes::from(bytes));
        self.patiently(name, "create", move || {
            let (store, path, payload) = (store.clone(), path.clone(), payload.clone());
            async move {
                let mode = PutMode::Create.into();
                match store.put_opts(&path, PutPayload::from(payload), mode).await {
                    Ok(_) => Ok(true),
                    Err(object_store::Error::AlreadyExists { .. }) => Ok(false),
                    Err(e) => Err(e),
                }
            }
        })
    }

    /// Deletes the object `name` (nothing when there is none).
    pub fn delete(&self, name: &str) -> Result<(), StoreError> {
        let (store, path) = (self.store.clone(), self.path(name));
        self.patiently(name, "delete", move || {
            let (store, path) = (store.clone(), path.clone());
            async move {
                match store.delete(&path).await {
                    Err(object_store::Error::NotFound { .. }) => Ok(()),
                    other => other,
                }
            }
        })
    }

    /// Runs the request `make` makes, again while it fails in a way that
    /// may pass (the store unreachable, 5xx answers), for up to
    /// [`PATIENCE`] with a growing pause; a failure that cannot pass (no
    /// such bucket, refused credentials) or one past the patience is
    /// returned naming the object's URL.
    pub(crate) fn patiently<T, F>(
        &self,
        name: &str,
        action: &'static str,
        make: impl Fn() -> F,
    ) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: Future<Output = Result<T, object_store::Error>> + Send + 'static,
    {
        let url = self.url_of(name);
        self.retrying(name, action, || wait(&url, make())?.map_err(Failure::Store))
    }

    /// `once`, again while it fails in a way that may pass, for up to
    /// [`PATIENCE`] with a growing pause; any other failure, or one past
    /// the patience, returned naming the object's URL.
    pub(crate) fn retrying<T>(
        &self,
        name: &str,
        action: &'static str,
        mut once: impl FnMut() -> Result<T, Failure>,
    ) -> Result<T, StoreError> {
        let url = self.url_of(name);
        let started = std::time::Instant::now();
        let mut pause = std::time::Duration::from_millis(200);
        loop {
            let error = match once() {
                Ok(value) => return Ok(value),
                Err(Failure::Done(e)) => return Err(e),
                Err(Failure::Store(error)) => error,
                Err(Failure::Io(e)) => object_store::Error::Generic {
                    store: "object store",
                    source: Box::new(e),
                },
            };
            if !(transient(&error) && started.elapsed() + pause < PATIENCE) {
                return Err(StoreError::Request { url, action, error });
            }
            tracing::warn!(
                url,
                action,
                error = cause(&error),
                retry_in_ms = pause.as_millis() as u64,
                "the object store failed; trying again"
            );
            std::thread::sleep(pause);
            pause = (pause * 2).min(std::time::Duration::from_secs(5));
        }
    }
}

/// A request's failure: the store's (tried again while it may pass), or
/// one that ends it (a local file's, the runtime gone).
pub(crate) enum Failure {
    Store(object_store::Error),
    /// The store's error as an async writer reports it.
    Io(std::io::Error),
    Done(StoreError),
}

impl From<StoreError> for Failure {
    fn from(e: StoreError) -> Self {
        Failure::Done(e)
    }
}

/// How long a request that fails in a way that may pass is tried again
/// (over the store client's own retries).
pub const PATIENCE: std::time::Duration = std::time::Duration::from_secs(120);

/// Whether a store's failure may pass if the request is made again: not an
/// answer about the request itself (4xx: no such bucket or object,
/// refused credentials, a failed condition), nor a wrong configuration.
pub(crate) fn transient(error: &object_store::Error) -> bool {
    let object_store::Error::Generic { .. } = error else {
        return false;
    };
    let mut text = error.to_string();
    let mut at: &dyn std::error::Error = error;
    while let Some(next) = at.source() {
        text.push_str(&next.to_string());
        at = next;
    }
    !text.contains("status code: 4")
}

/// A store's error in a line: the server's own code and message when it
/// sent one (`The specified bucket does not exist (NoSuchBucket)`), else
/// the innermost cause, with the HTTP status when there was one.
fn cause(error: &object_store::Error) -> String {
    let mut chain = vec![error.to_string()];
    let mut at: &dyn std::error::Error = error;
    while let Some(next) = at.source() {
        chain.push(next.to_string());
        at = next;
    }
    let all = chain.join("\n");
    let tag = |name: &str| {
        let open = format!("<{name}>");
        let start = all.find(&open)? + open.len();
        let end = all[start..].find(&format!("</{name}>"))?;
        Some(all[start..start + end].to_string())
    };
    if let (Some(code), Some(message)) = (tag("Code"), tag("Message")) {
        return format!("{message} ({code})");
    }
    let innermost = chain.last().cloned().unwrap_or_default();
    let innermost = innermost.lines().next().unwrap_or_default();
    if innermost.contains("status code") {
        return innermost.to_string();
    }
    let status = all
        .find("status code: ")
        .map(|i| &all[i + "status code: ".len()..])
        .and_then(|rest| rest.split([':', '\n']).next())
        .map(|s| format!(" (HTTP {})", s.trim()))
        .unwrap_or_default();
    format!("{innermost}{status}")
}

/// The store a URL names, built from the environment's configuration.
fn build(
    url: &url::Url,
    options: &[(&str, String)],
) -> Result<Arc<dyn ObjectStore>, object_store::Error> {
    use object_store::aws::AmazonS3Builder;
    use object_store::azure::MicrosoftAzureBuilder;
    use object_store::gcp::GoogleCloudStorageBuilder;
    let text = url.as_str();
    Ok(match url.scheme() {
        "s3" | "s3a" => {
            let endpoints = ["AWS_ENDPOINT_URL", "AWS_ENDPOINT", "AWS_ENDPOINT_URL_S3"];
            let http = endpoints
                .iter()
                .filter_map(|v| std::env::var(v).ok())
                .chain(
                    options
                        .iter()
                        .filter(|(k, _)| endpoints.contains(k))
                        .map(|(_, v)| v.clone()),
                )
                .any(|e| e.starts_with("http://"));
            let mut builder = AmazonS3Builder::from_env().with_url(text);
            for (key, value) in options {
                if let Ok(key) = key.to_ascii_lowercase().parse() {
                    builder = builder.with_config(key, value);
                }
            }
            Arc::new(builder.with_allow_http(http).build()?)
        }
        "gs" => Arc::new(
            GoogleCloudStorageBuilder::from_env()
                .with_url(text)
                .build()?,
        ),
        "az" | "azure" | "abfs" | "abfss" | "adl" => {
            Arc::new(MicrosoftAzureBuilder::from_env().with_url(text).build()?)
        }
        other => {
            return Err(object_store::Error::NotSupported {
                source: format!("`{other}://` is not a store pregen knows ({SCHEMES})").into(),
            });
        }
    })
}

/// The store's own runtime: two threads, started on first use.
fn runtime() -> Option<&'static tokio::runtime::Runtime> {
    static RUNTIME: OnceLock<Option<tokio::runtime::Runtime>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("pregen-store")
                .enable_all()
                .build()
                .ok()
        })
        .as_ref()
}

/// Runs `future` on the store's runtime and waits for it on this thread.
fn wait<T: Send + 'static>(
    url: &str,
    future: impl Future<Output = T> + Send + 'static,
) -> Result<T, StoreError> {
    let stopped = || StoreError::Stopped {
        url: url.to_string(),
    };
    let runtime = runtime().ok_or_else(stopped)?;
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    runtime.spawn(async move {
        let _ = tx.send(future.await);
    });
    rx.recv().map_err(|_| stopped())
}

/// A local file's error, naming it.
fn local(path: &Path, action: &'static str) -> impl FnOnce(std::io::Error) -> StoreError {
    let path = path.to_path_buf();
    move |source| StoreError::Local {
        path,
        action,
        source,
    }
}
