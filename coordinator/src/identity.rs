//! Worker identities: the coordinator, not the worker, says who a worker is.
//!
//! A worker's Hello carries a name of its choosing; the coordinator adds an
//! ID it draws at random and records the worker as `NAME#ID` (the `worker`
//! column, refusals, the cross-check's "another worker", metrics). With the
//! Welcome the worker gets a key, `ID.MAC`, where MAC is a keyed hash of the
//! name and the ID under the coordinator's secret (the cross-check's key, kept beside the
//! commit log, so a restarted coordinator knows its keys). A worker presents
//! the key on every later session and keeps its identity; a key the
//! coordinator did not issue gets a fresh identity. So a name proves
//! nothing: a refusal of `w1#5c0f...` leaves another `w1` alone, and no one
//! can speak as a refused worker's identity without its key. Where workers
//! hold TLS client certificates (`serve --tls-client-ca`), the ID is the
//! certificate's: a refused certificate stays refused under any name.

use sha2::{Digest, Sha256};

/// Longest worker name taken.
pub const MAX_NAME: usize = 64;

/// Issues and checks worker identities under one secret.
#[derive(Debug, Clone)]
pub struct Identities {
    secret: [u8; 16],
}

/// A worker admitted to a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admitted {
    /// `NAME#ID`.
    pub identity: String,
    /// The key to present on the next session.
    pub key: String,
}

impl Identities {
    /// Identities under `secret`.
    pub fn new(secret: [u8; 16]) -> Self {
        Identities { secret }
    }

    /// The identity of a worker named `name` that presents `key` (empty on
    /// first contact) or, over TLS with client certificates, the
    /// certificate `cert` (DER): its ID is then the certificate's, the
    /// first 12 hex digits of its SHA-256, whatever the key. A name outside
    /// [`check_name`]'s rules is refused.
    pub fn admit(
        &self,
        name: &str,
        key: &str,
        cert: Option<&[u8]>,
    ) -> Result<Admitted, Unadmitted> {
        let name = check_name(name)?;
        let id = match key.split_once('.') {
            _ if cert.is_some() => {
                let digest = Sha256::digest(cert.unwrap_or_default());
                pregen_games::hex(&digest[..6])
            }
            Some((id, mac)) if is_id(id) && same(mac.as_bytes(), self.mac(name, id).as_bytes()) => {
                id.to_string()
            }
            _ => {
                if !key.is_empty() {
                    tracing::info!(
                        name,
                        "a worker key this coordinator did not issue; a new identity"
                    );
                }
                fresh_id()?
            }
        };
        Ok(Admitted {
            identity: format!("{name}#{id}"),
            key: format!("{id}.{}", self.mac(name, &id)),
        })
    }

    /// The keyed hash that makes `name#id` a key (a name never holds `\0`).
    fn mac(&self, name: &str, id: &str) -> String {
        let digest = Sha256::new()
            .chain_update(self.secret)
            .chain_update(b"pregen worker id\0")
            .chain_update(name.as_bytes())
            .chain_update(b"\0")
            .chain_update(id.as_bytes())
            .finalize();
        pregen_games::hex(&digest[..16])
    }
}

/// Why a worker gets no identity.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unadmitted {
    /// Its name breaks [`check_name`]'s rules (shown escaped, cut).
    #[error("worker name \"{0}\" refused: a name is 1 to {MAX_NAME} letters, digits and -_.:@")]
    Name(String),
    /// The system gave no randomness for a new ID.
    #[error("no randomness for a worker id: {0}")]
    NoRandomness(String),
}

/// A worker's name as the coordinator takes it: 1 to [`MAX_NAME`] letters,
/// digits and `-_.:@` (a host name and a pid fit; quotes, spaces, `#` and
/// control characters do not, so a name reads the same in logs, metrics and
/// the pack). An empty name is `worker`.
pub fn check_name(name: &str) -> Result<&str, Unadmitted> {
    if name.is_empty() {
        return Ok("worker");
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || "-_.:@".contains(c);
    if name.len() > MAX_NAME || !name.chars().all(allowed) {
        let shown: String = name
            .chars()
            .take(MAX_NAME)
            .flat_map(char::escape_debug)
            .collect();
        return Err(Unadmitted::Name(shown));
    }
    Ok(name)
}

/// 48 random bits as 12 hex digits.
fn fresh_id() -> Result<String, Unadmitted> {
    let mut bytes = [0u8; 6];
    getrandom::fill(&mut bytes).map_err(|e| Unadmitted::NoRandomness(e.to_string()))?;
    Ok(pregen_games::hex(&bytes))
}

fn is_id(id: &str) -> bool {
    id.len() == 12
        && id
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// Equal bytes, compared in time that does not depend on where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_keeps_the_identity_and_a_name_does_not() {
        let ids = Identities::new([7; 16]);
        let first = ids.admit("w1", "", None).expect("admitted");
        assert!(first.identity.starts_with("w1#"));
        let again = ids.admit("w1", &first.key, None).expect("admitted");
        assert_eq!(again, first, "the key brings the identity back");
        let other = ids.admit("w1", "", None).expect("admitted");
        assert_ne!(
            other.identity, first.identity,
            "the same name, another worker"
        );
        // A made-up or another coordinator's key: a new identity.
        let id = first.key.split_once('.').expect("key").0;
        for forged in [
            format!("{id}.{}", "0".repeat(32)),
            format!("{id}."),
            id.to_string(),
        ] {
            let admitted = ids.admit("w1", &forged, None).expect("admitted");
            assert_ne!(admitted.identity, first.identity, "{forged}");
        }
        let elsewhere = Identities::new([8; 16])
            .admit("w1", &first.key, None)
            .expect("admitted");
        assert_ne!(elsewhere.identity, first.identity);
        // A key is the identity's, name included.
        let renamed = ids.admit("w2", &first.key, None).expect("admitted");
        assert!(renamed.identity.starts_with("w2#"));
        assert_ne!(renamed.identity[3..], first.identity[3..]);
    }

    #[test]
    fn a_certificate_is_the_identity_whatever_the_key() {
        let ids = Identities::new([7; 16]);
        let a = ids
            .admit("w1", "", Some(b"certificate a"))
            .expect("admitted");
        let again = ids
            .admit("w1", "", Some(b"certificate a"))
            .expect("admitted");
        assert_eq!(a.identity, again.identity);
        let b = ids
            .admit("w1", &a.key, Some(b"certificate b"))
            .expect("admitted");
        assert_ne!(
            a.identity, b.identity,
            "another certificate, another worker"
        );
        let renamed = ids
            .admit("w2", "", Some(b"certificate a"))
            .expect("admitted");
        assert_eq!(
            renamed.identity.split_once('#').map(|p| p.1),
            a.identity.split_once('#').map(|p| p.1)
        );
    }

    #[test]
    fn names_are_restricted_to_what_reads_plainly_everywhere() {
        for good in [
            "w1",
            "node-17.cluster:4242",
            "host_a@rack3",
            &"x".repeat(64),
        ] {
            assert_eq!(check_name(good), Ok(good));
        }
        assert_eq!(check_name(""), Ok("worker"));
        for bad in [
            "w\"} pregen_levels_committed 99999\n#",
            "a b",
            "w1#abc",
            "tab\t",
            "é",
            &"x".repeat(65),
        ] {
            let err = check_name(bad).expect_err(bad).to_string();
            assert!(err.contains("worker name"), "{err}");
            assert!(!err.contains('\n'), "the refusal is one line: {err}");
        }
    }
}
