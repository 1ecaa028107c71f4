//! The lease that keeps two coordinators off one pack in an object store,
//! as `commit/LOCK` does on a file system: an object taken with a
//! create-only put, renewed with a put conditional on the version this
//! holder wrote last, and taken over only once it has expired. A holder
//! whose renewal finds another's version has lost it (it was too slow to
//! renew) and must stop: it is fenced.
//!
//! The object is JSON: `{"holder": "pid 12 on host", "until_ms": …}`, the
//! expiry in milliseconds since the Unix epoch by the holder's clock.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use object_store::{ObjectStoreExt, PutMode, PutPayload, UpdateVersion};
use serde::{Deserialize, Serialize};

use crate::{Remote, StoreError};

/// A lease held on an object.
#[derive(Debug)]
pub struct Lease {
    remote: Remote,
    name: String,
    holder: String,
    ttl: Duration,
    version: UpdateVersion,
}

/// Why a lease could not be taken or kept.
#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    /// Another holder has it and it has not expired.
    #[error(
        "{url} is held by {holder} for {left_ms} ms more: another coordinator is using this pack"
    )]
    Held {
        /// The lease's URL.
        url: String,
        /// Who holds it.
        holder: String,
        /// How long it is still held.
        left_ms: u64,
    },
    /// Another holder took it over (this one renewed too late).
    #[error("{url} was taken over by {holder}: this coordinator stops")]
    Lost {
        /// The lease's URL.
        url: String,
        /// Who holds it now.
        holder: String,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, Serialize, Deserialize)]
struct Held {
    holder: String,
    until_ms: u64,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Lease {
    /// Takes the lease `name` below `remote` for `ttl`, naming this holder;
    /// refuses while another holds it unexpired.
    pub fn take(
        remote: &Remote,
        name: &str,
        holder: String,
        ttl: Duration,
    ) -> Result<Lease, LeaseError> {
        let body = Self::body(&holder, ttl);
        let mut lease = Lease {
            remote: remote.clone(),
            name: name.to_string(),
            holder,
            ttl,
            version: UpdateVersion {
                e_tag: None,
                version: None,
            },
        };
        if let Ok(version) = lease.put(body.clone(), PutMode::Create)? {
            lease.version = version;
            return Ok(lease);
        }
        // Someone wrote it: take it over only once it has expired.
        let (held, version) = lease.current()?;
        let now = now_ms();
        // This holder's own: a create whose answer was lost, tried again.
        if held.holder == lease.holder {
            lease.version = version;
            return Ok(lease);
        }
        if held.until_ms > now {
            return Err(LeaseError::Held {
                url: remote.url_of(name),
                holder: held.holder,
                left_ms: held.until_ms - now,
            });
        }
        match lease.put(body, PutMode::Update(version))? {
            Ok(version) => {
                lease.version = version;
                Ok(lease)
            }
            Err(()) => Err(LeaseError::Lost {
                url: remote.url_of(name),
                holder: lease.current().map(|(h, _)| h.holder).unwrap_or_default(),
            }),
        }
    }

    /// Renews the lease for another `ttl`; [`LeaseError::Lost`] when
    /// another holder has taken it over.
    pub fn renew(&mut self) -> Result<(), LeaseError> {
        let body = Self::body(&self.holder, self.ttl);
        match self.put(body, PutMode::Update(self.version.clone()))? {
            Ok(version) => {
                self.version = version;
                Ok(())
            }
            Err(()) => Err(LeaseError::Lost {
                url: self.remote.url_of(&self.name),
                holder: self.current().map(|(h, _)| h.holder).unwrap_or_default(),
            }),
        }
    }

    /// Gives the lease up (deletes it, if it is still this holder's).
    pub fn release(self) -> Result<(), LeaseError> {
        let body = serde_json::to_vec(&Held {
            holder: self.holder.clone(),
            until_ms: 0,
        })
        .unwrap_or_default();
        // Expire it by a conditional write: a lease another took is left alone.
        let _ = self.put(body, PutMode::Update(self.version.clone()))?;
        Ok(())
    }

    /// How often to renew: a third of the lease's length.
    pub fn renew_every(&self) -> Duration {
        self.ttl / 3
    }

    fn body(holder: &str, ttl: Duration) -> Vec<u8> {
        let held = Held {
            holder: holder.to_string(),
            until_ms: now_ms() + ttl.as_millis() as u64,
        };
        serde_json::to_vec(&held).unwrap_or_default()
    }

    /// A conditional put: `Ok(Err(()))` when its condition failed.
    fn put(&self, body: Vec<u8>, mode: PutMode) -> Result<Result<UpdateVersion, ()>, StoreError> {
        let (store, path) = (self.remote.store.clone(), self.remote.path(&self.name));
        let body = bytes::Bytes::from(body);
        self.remote.patiently(&self.name, "write", move || {
            let (store, path, body, mode) =
                (store.clone(), path.clone(), body.clone(), mode.clone());
            async move {
                match store
                    .put_opts(&path, PutPayload::from(body), mode.into())
                    .await
                {
                    Ok(result) => Ok(Ok(UpdateVersion {
                        e_tag: result.e_tag,
                        version: result.version,
                    })),
                    Err(
                        object_store::Error::AlreadyExists { .. }
                        | object_store::Error::Precondition { .. },
                    ) => Ok(Err(())),
                    Err(e) => Err(e),
                }
            }
        })
    }

    /// The lease as it is in the store, with its version.
    fn current(&self) -> Result<(Held, UpdateVersion), StoreError> {
        let (store, path) = (self.remote.store.clone(), self.remote.path(&self.name));
        let (bytes, version) = self.remote.patiently(&self.name, "read", move || {
            let (store, path) = (store.clone(), path.clone());
            async move {
                let result = store.get(&path).await?;
                let version = UpdateVersion {
                    e_tag: result.meta.e_tag.clone(),
                    version: result.meta.version.clone(),
                };
                Ok((result.bytes().await?, version))
            }
        })?;
        // An unreadable lease counts as expired: it is taken over.
        let held = serde_json::from_slice(&bytes).unwrap_or(Held {
            holder: "an unreadable lease".into(),
            until_ms: 0,
        });
        Ok((held, version))
    }
}
