//! A command's pack (or release) where it lives: a folder as it is; a pack
//! in an object store copied to a temporary folder first (removed when the
//! command ends), without the coordinator's commit log unless the command
//! reads it; an output written to a store uploaded whole when done.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use pregen_store::{Location, Remote};

/// A pack (or release) readable as a local path.
pub struct Fetched {
    path: PathBuf,
    _temp: Option<tempfile::TempDir>,
}

impl Fetched {
    /// Where to read it.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Whether a fetch copies the commit log too.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Log {
    /// Only the pack (levels, release, manifest, `_SUCCESS`).
    Without,
    /// The commit log as well (`retier` rates from it).
    With,
}

/// The pack (or release, or release archive) at `location`, as a local path.
pub fn fetch(location: &Location, log: Log) -> Result<Fetched> {
    let remote = match location {
        Location::Local(path) => {
            return Ok(Fetched {
                path: path.clone(),
                _temp: None,
            });
        }
        Location::Remote(remote) => remote,
    };
    let temp = tempfile::Builder::new()
        .prefix("pregen-read-")
        .tempdir()
        .context("cannot make a temporary folder for a pack in an object store")?;
    let url = remote.url();
    let name = url
        .rsplit('/')
        .next()
        .filter(|n| !n.is_empty())
        .unwrap_or("pack");
    let path = temp.path().join(name);
    let mut objects = remote.list()?;
    let keep = |o: &pregen_store::Object| {
        log == Log::With && o.name != "commit/LEASE" || !o.name.starts_with("commit/")
    };
    objects.retain(keep);
    if objects.is_empty() {
        // The URL names one object (a release archive), or nothing.
        match remote.download("", &path) {
            Ok(()) => objects.push(pregen_store::Object {
                name: String::new(),
                size: std::fs::metadata(&path).map_or(0, |m| m.len()),
            }),
            Err(e) if e.is_not_found() => {
                bail!("{url}: no such pack or archive (nothing is stored there)")
            }
            Err(e) => return Err(e.into()),
        }
    } else {
        remote.download_all(&path, keep)?;
    }
    let bytes: u64 = objects.iter().map(|o| o.size).sum();
    eprintln!(
        "read {url} ({} objects, {:.1} MB) into a temporary folder",
        objects.len(),
        bytes as f64 / 1e6
    );
    Ok(Fetched {
        path,
        _temp: Some(temp),
    })
}

/// Where a command writes a file: a local path, or a temporary file that
/// [`Output::deliver`] uploads to an object store.
pub struct Output {
    path: PathBuf,
    to: Option<(Remote, tempfile::TempDir)>,
}

impl Output {
    /// The file `location` names, written locally first when it is in a store.
    pub fn new(location: &Location) -> Result<Output> {
        match location {
            Location::Local(path) => Ok(Output {
                path: path.clone(),
                to: None,
            }),
            Location::Remote(remote) => {
                let temp = tempfile::Builder::new()
                    .prefix("pregen-out-")
                    .tempdir()
                    .context("cannot make a temporary folder for an upload")?;
                Ok(Output {
                    path: temp.path().join("upload"),
                    to: Some((remote.clone(), temp)),
                })
            }
        }
    }

    /// Where to write it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Uploads the file to its store (nothing for a local one); returns
    /// where it is, for messages.
    pub fn deliver(self) -> Result<String> {
        match self.to {
            None => Ok(self.path.display().to_string()),
            Some((remote, _temp)) => {
                remote.upload(&self.path, "")?;
                Ok(remote.url())
            }
        }
    }
}
