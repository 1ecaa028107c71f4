//! The segment format (version 6): a header line, then a zstd body of
//! length-delimited entries sealed by the header's keyed checksum
//! ([`LogKey::seal`]), a level stored as the wire's message. Segments of
//! older versions are refused: those before 5 carry checksums anyone can
//! recompute, and 5 laid levels out in a form of its own.

use std::fs;
use std::io::{ErrorKind, Read};
use std::path::Path;

use pregen_pack::PackError;
use pregen_pack::codec;
use pregen_pack::durable::write_durably;
use serde::{Deserialize, Serialize};

use super::key::LogKey;
use super::{Entry, Mode, segment_name};
use crate::{CoordinatorError, ResumeError};

/// The segment format this build writes.
pub const FORMAT_VERSION: u32 = 6;
/// The zstd level of segment bodies: level 1 compresses a run's segments
/// about half again as fast as level 3, for 5 to 9% more bytes.
pub(super) const ZSTD_LEVEL: i32 = 1;
/// The encoder's buffers keep at most this much between segments.
pub(super) const KEPT_BUFFER: usize = 4 << 20;
/// The largest entry a segment may hold (a hostile length is refused before
/// anything is allocated for it).
pub(super) const MAX_ENTRY_BYTES: usize = 64 << 20;
pub(super) const KIND_RESULT: u8 = 0;
pub(super) const KIND_REFUSED: u8 = 1;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Refusal {
    pub(super) worker: String,
    pub(super) reason: String,
}

impl Entry {
    /// Appends the entry's length-delimited binary form to `out`.
    pub(super) fn encode(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        let start = out.len();
        out.extend_from_slice(&[0; 4]);
        match self {
            Entry::Result(r) => {
                out.push(KIND_RESULT);
                codec::encode(r, out);
            }
            Entry::Refused { worker, reason } => {
                out.push(KIND_REFUSED);
                serde_json::to_writer(
                    &mut *out,
                    &Refusal {
                        worker: worker.clone(),
                        reason: reason.clone(),
                    },
                )?;
            }
        }
        let len = (out.len() - start - 4) as u32;
        out[start..start + 4].copy_from_slice(&len.to_le_bytes());
        Ok(())
    }

    /// An entry from its kind and payload.
    pub(super) fn decode(kind: u8, payload: &[u8]) -> Result<Entry, Undecoded> {
        match kind {
            KIND_RESULT => codec::decode(payload)
                .map(Entry::Result)
                .map_err(|e| Undecoded::Result(e.to_string())),
            KIND_REFUSED => serde_json::from_slice::<Refusal>(payload)
                .map(|r| Entry::Refused {
                    worker: r.worker,
                    reason: r.reason,
                })
                .map_err(Undecoded::Refusal),
            other => Err(Undecoded::Kind(other)),
        }
    }
}

/// Why an entry's bytes are not an entry.
#[derive(Debug, thiserror::Error)]
pub(super) enum Undecoded {
    /// A result whose binary form does not decode.
    #[error("{0}")]
    Result(String),
    /// A refusal whose JSON does not parse.
    #[error("{0}")]
    Refusal(serde_json::Error),
    /// A kind no version writes.
    #[error("unknown kind {0}")]
    Kind(u8),
}

/// A segment's first line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Header {
    pub(super) format: String,
    pub(super) version: u32,
    pub(super) job_id: String,
    pub(super) segment: u64,
    pub(super) records: u64,
    /// The body.
    pub(super) body: Body,
}

/// What any version's header says of itself.
#[derive(Deserialize)]
struct Version {
    format: String,
    version: u32,
}

impl Header {
    pub(super) fn new(
        version: u32,
        job_id: &str,
        segment: u64,
        records: usize,
        body: Body,
    ) -> Header {
        Header {
            format: FORMAT_NAME.into(),
            version,
            job_id: job_id.into(),
            segment,
            records: records as u64,
            body,
        }
    }
}

/// A binary segment's body, as its header describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Body {
    /// Its length in bytes (compressed).
    pub(super) bytes: u64,
    /// [`LogKey::seal`] of the segment, hex.
    hmac_sha256: String,
}

pub(super) const FORMAT_NAME: &str = "pregen-commit-log";

/// Encodes binary segments. The zstd context and the buffers are kept from
/// one segment to the next: a fresh context allocates (and the kernel zeroes)
/// its tables, and fresh buffers of a segment's size are fresh pages each
/// flush.
pub(super) struct SegmentEncoder {
    key: LogKey,
    pub(super) zstd: zstd::bulk::Compressor<'static>,
    /// The entries of the segment being encoded, before compression.
    pub(super) raw: Vec<u8>,
    /// Its compressed body.
    pub(super) body: Vec<u8>,
}

impl std::fmt::Debug for SegmentEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SegmentEncoder")
    }
}

impl SegmentEncoder {
    pub(super) fn new(key: LogKey) -> std::io::Result<SegmentEncoder> {
        Ok(SegmentEncoder {
            key,
            zstd: zstd::bulk::Compressor::new(ZSTD_LEVEL)?,
            raw: Vec::new(),
            body: Vec::new(),
        })
    }

    /// A binary segment: its header line and its zstd body.
    pub(super) fn encode(
        &mut self,
        job_id: &str,
        n: u64,
        records: &[Entry],
    ) -> std::io::Result<Vec<u8>> {
        self.raw.clear();
        for r in records {
            r.encode(&mut self.raw)?;
        }
        self.body.clear();
        self.body
            .reserve(zstd::zstd_safe::compress_bound(self.raw.len()));
        self.zstd.compress_to_buffer(&self.raw, &mut self.body)?;
        let header = Header::new(
            FORMAT_VERSION,
            job_id,
            n,
            records.len(),
            Body {
                bytes: self.body.len() as u64,
                hmac_sha256: self.key.seal(job_id, n, records.len() as u64, &self.body),
            },
        );
        let mut bytes = serde_json::to_vec(&header)?;
        bytes.push(b'\n');
        bytes.extend_from_slice(&self.body);
        // A segment of a log that fell behind can be large; what is kept
        // between flushes stays small.
        self.raw.shrink_to(KEPT_BUFFER);
        self.body.shrink_to(KEPT_BUFFER);
        Ok(bytes)
    }
}

pub(super) fn damaged(path: &Path, what: String) -> CoordinatorError {
    ResumeError::Damaged {
        path: path.to_path_buf(),
        what,
    }
    .into()
}

/// A segment file and what it must hold.
pub(super) struct Segment<'a> {
    pub(super) path: &'a Path,
    pub(super) job_id: &'a str,
    /// The log's key.
    pub(super) key: &'a LogKey,
    /// The job's seeds: a range per stratum.
    pub(super) seeds: &'a [(u64, u64)],
    /// Its number.
    pub(super) n: u64,
    /// Whether it is the last (whose torn tail may be cut back).
    pub(super) last: bool,
}

impl Segment<'_> {
    pub(super) fn damaged(&self, what: String) -> CoordinatorError {
        damaged(self.path, what)
    }

    /// Refuses a result whose seed is not one of the job's.
    pub(super) fn check_seed(
        &self,
        entry: &Entry,
        at: impl FnOnce() -> String,
    ) -> Result<(), CoordinatorError> {
        match entry {
            Entry::Result(r) if !self.seeds.iter().any(|&(a, b)| (a..b).contains(&r.seed)) => {
                Err(self.damaged(format!(
                    "{} holds seed {}, not one of the job's",
                    at(),
                    r.seed
                )))
            }
            _ => Ok(()),
        }
    }
}

/// Reads a segment into `records`, checking its header and every entry.
pub(super) fn read_segment(
    segment: &Segment<'_>,
    mode: Mode,
    records: &mut Vec<Entry>,
) -> Result<(), CoordinatorError> {
    let path = segment.path;
    let bytes = fs::read(path).map_err(PackError::io("read", path))?;
    let Some(end) = bytes.iter().position(|&b| b == b'\n') else {
        return Err(segment.damaged("no whole header line".into()));
    };
    let line = std::str::from_utf8(&bytes[..end]).map_err(|e| e.to_string());
    let not_a_header = |e: String| segment.damaged(format!("line 1 is not a segment header ({e})"));
    let version: Version = line
        .clone()
        .and_then(|h| serde_json::from_str(h).map_err(|e| e.to_string()))
        .map_err(not_a_header)?;
    if version.format == FORMAT_NAME && version.version < FORMAT_VERSION {
        return Err(ResumeError::OlderFormat {
            path: path.to_path_buf(),
            version: version.version,
        }
        .into());
    }
    if version.format != FORMAT_NAME || version.version != FORMAT_VERSION {
        return Err(segment.damaged(format!(
            "format {} version {}, this build reads {FORMAT_NAME} version {FORMAT_VERSION}",
            version.format, version.version
        )));
    }
    let header: Header = line
        .and_then(|h| serde_json::from_str(h).map_err(|e| e.to_string()))
        .map_err(not_a_header)?;
    if header.job_id != segment.job_id {
        return Err(segment.damaged(format!(
            "written for job {}, this job is {}",
            header.job_id, segment.job_id
        )));
    }
    if header.segment != segment.n {
        return Err(segment.damaged(format!(
            "holds segment {} under the name of segment {}",
            header.segment, segment.n
        )));
    }
    if path.extension().is_none_or(|e| e != "bin") {
        return Err(segment.damaged("a segment in a file not named .bin".into()));
    }
    read_body(segment, &header, &bytes[end + 1..], mode, records)
}

/// Reads a segment's body.
fn read_body(
    segment: &Segment<'_>,
    header: &Header,
    rest: &[u8],
    mode: Mode,
    records: &mut Vec<Entry>,
) -> Result<(), CoordinatorError> {
    let body = &header.body;
    let (have, declared) = (rest.len() as u64, body.bytes);
    if have > declared || (have < declared && !segment.last) {
        return Err(segment.damaged(format!(
            "a body of {have} bytes, the header says {declared}"
        )));
    }
    let torn = have < declared;
    if !torn
        && segment
            .key
            .seal(segment.job_id, segment.n, header.records, rest)
            != body.hmac_sha256
    {
        return Err(segment.damaged(
            "the segment fails its keyed checksum (edited, or sealed under another key)".into(),
        ));
    }
    let start = records.len();
    if torn {
        // Torn: the body's keyed checksum covers the whole of it, so no
        // entry of what is left can be proven, and none is read: all are
        // dropped and their seeds run again (a write cut short loses at
        // most one segment's work). A shortened body is never taken, so an
        // edit made without the key cannot pass as a torn write.
        if mode == Mode::Repair {
            tracing::warn!(file = %segment.path.display(), lost = header.records,
                "a torn last segment: its entries are dropped and their seeds run again");
            let bytes = SegmentEncoder::new(*segment.key)
                .and_then(|mut encoder| encoder.encode(segment.job_id, segment.n, &[]))
                .map_err(|e| CoordinatorError::server("re-encoding a torn segment")(e.into()))?;
            let dir = segment.path.parent().unwrap_or(Path::new("."));
            write_durably(dir, &segment_name(segment.n), &bytes)?;
        }
        return Ok(());
    }
    let mut reader = zstd::stream::read::Decoder::with_buffer(rest)
        .map_err(|e| segment.damaged(format!("the body is not zstd ({e})")))?;
    let mut index = 0u64;
    let outcome: Result<(), String> = loop {
        let mut len = [0u8; 4];
        match fill(&mut reader, &mut len) {
            Ok(false) => break Ok(()),
            Ok(true) => {}
            Err(e) => break Err(format!("entry {} is cut short ({e})", index + 1)),
        }
        index += 1;
        if index > header.records {
            break Err(format!("more entries than the header's {}", header.records));
        }
        let len = u32::from_le_bytes(len) as usize;
        if !(1..=MAX_ENTRY_BYTES).contains(&len) {
            break Err(format!("entry {index} has a length of {len} bytes"));
        }
        let mut entry = vec![0u8; len];
        if let Err(e) = fill(&mut reader, &mut entry).and_then(|whole| {
            whole
                .then_some(())
                .ok_or_else(|| ErrorKind::UnexpectedEof.into())
        }) {
            break Err(format!("entry {index} is cut short ({e})"));
        }
        match Entry::decode(entry[0], &entry[1..]) {
            Ok(e) => {
                segment.check_seed(&e, || format!("entry {index}"))?;
                records.push(e);
            }
            Err(e) => break Err(format!("entry {index} is not an entry ({e})")),
        }
    };
    let read = (records.len() - start) as u64;
    match outcome {
        Ok(()) if read == header.records => Ok(()),
        Ok(()) => Err(segment.damaged(format!(
            "{read} entries, the header says {}",
            header.records
        ))),
        Err(e) => Err(segment.damaged(e)),
    }
}

/// Fills `buf` from `reader`; `false` at a clean end before its first byte.
pub(super) fn fill(reader: &mut impl Read, buf: &mut [u8]) -> std::io::Result<bool> {
    let mut got = 0;
    while got < buf.len() {
        match reader.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => return Err(ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}
