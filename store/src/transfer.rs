//! Files moved whole between a local folder and a [`Remote`]: a download
//! streamed to a file, an upload streamed from one (in parts of
//! [`PART_BYTES`] above that size; a multipart upload appears whole when it
//! completes, or not at all). Memory stays bounded whatever the files'
//! sizes and the callers' threads: at most [`UPLOADS_AT_ONCE`] uploads run
//! at once in the process, each holding at most one part being filled and
//! [`PARTS_IN_FLIGHT`] being sent (48 MiB in all).

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Condvar, Mutex};

use futures_util::StreamExt;
use object_store::ObjectStoreExt;
use object_store::buffered::BufWriter;
use tokio::io::AsyncWriteExt;

use crate::{Failure, Object, Remote, StoreError, local, wait};

/// The size of an upload's parts (S3's minimum is 5 MiB).
pub const PART_BYTES: usize = 8 << 20;
/// An upload's parts sent at once.
pub const PARTS_IN_FLIGHT: usize = 2;
/// Uploads at once in the process (more wait their turn).
pub const UPLOADS_AT_ONCE: usize = 2;

/// The turns of [`UPLOADS_AT_ONCE`]: the uploads running, and a wake-up.
static TURNS: (Mutex<usize>, Condvar) = (Mutex::new(0), Condvar::new());

/// One upload's turn, given back when dropped.
struct Turn;

impl Turn {
    fn wait() -> Turn {
        let (running, freed) = &TURNS;
        let mut running = running.lock().unwrap_or_else(|p| p.into_inner());
        while *running >= UPLOADS_AT_ONCE {
            running = freed.wait(running).unwrap_or_else(|p| p.into_inner());
        }
        *running += 1;
        Turn
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let (running, freed) = &TURNS;
        *running.lock().unwrap_or_else(|p| p.into_inner()) -= 1;
        freed.notify_one();
    }
}

impl Remote {
    /// Copies the object `name` to the local file `to` (its folder made),
    /// through a temporary file beside it renamed into place.
    pub fn download(&self, name: &str, to: &Path) -> Result<(), StoreError> {
        self.retrying(name, "read", || self.download_once(name, to))
    }

    fn download_once(&self, name: &str, to: &Path) -> Result<(), Failure> {
        let folder = to.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(folder).map_err(local(folder, "create"))?;
        let file =
            tempfile::NamedTempFile::new_in(folder).map_err(local(folder, "create a file in"))?;
        let (file, temp) = file.into_parts();
        let store = self.store.clone();
        let path = self.path(name);
        let at = temp.to_path_buf();
        let copied = wait(&self.url_of(name), async move {
            let mut out = std::io::BufWriter::new(file);
            let mut stream = store
                .get(&path)
                .await
                .map_err(Failure::Store)?
                .into_stream();
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(Failure::Store)?;
                out.write_all(&chunk)
                    .map_err(|e| Failure::Done(local(&at, "write")(e)))?;
            }
            out.flush()
                .map_err(|e| Failure::Done(local(&at, "write")(e)))
        })?;
        copied?;
        temp.persist(to).map_err(|e| local(to, "write")(e.error))?;
        Ok(())
    }

    /// Copies every object below the prefix that `keep` accepts into the
    /// folder `to`, under the same names.
    pub fn download_all(
        &self,
        to: &Path,
        keep: impl Fn(&Object) -> bool,
    ) -> Result<Vec<Object>, StoreError> {
        let objects: Vec<Object> = self.list()?.into_iter().filter(|o| keep(o)).collect();
        for object in &objects {
            self.download(&object.name, &to.join(&object.name))?;
        }
        Ok(objects)
    }

    /// Copies the local file `from` to the object `name`, replacing any:
    /// the object appears whole when the upload completes, or not at all.
    pub fn upload(&self, from: &Path, name: &str) -> Result<(), StoreError> {
        let _turn = Turn::wait();
        self.retrying(name, "write", || self.upload_once(from, name))
    }

    fn upload_once(&self, from: &Path, name: &str) -> Result<(), Failure> {
        let mut file = std::fs::File::open(from).map_err(local(from, "open"))?;
        let store = self.store.clone();
        let path = self.path(name);
        let at = from.to_path_buf();
        wait(&self.url_of(name), async move {
            let mut out = BufWriter::with_capacity(store, path, PART_BYTES)
                .with_max_concurrency(PARTS_IN_FLIGHT);
            let mut buffer = vec![0; 1 << 20];
            loop {
                let n = match file.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) => {
                        let _ = out.abort().await;
                        return Err(Failure::Done(local(&at, "read")(e)));
                    }
                };
                if let Err(e) = out.write_all(&buffer[..n]).await {
                    let _ = out.abort().await;
                    return Err(Failure::Io(e));
                }
            }
            out.shutdown().await.map_err(Failure::Io)
        })?
    }
}
