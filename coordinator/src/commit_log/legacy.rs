//! Segments of the retired JSON-lines format (versions 2 and 3,
//! `seg-00000001.jsonl`: a header line, then `<checksum> <JSON>` a line), read
//! so that an older log resumes and goes on in the binary form. Dropping
//! support for them is deleting this module and its arm in
//! [`super::segment::read_segment`].

use std::path::Path;

use pregen_games::sha256_hex;
use pregen_pack::PackError;
use pregen_pack::durable::write_durably;
use serde::{Deserialize, Serialize};

use super::segment::{Header, Refusal, Segment};
use super::{Entry, Mode};
use crate::CoordinatorError;

/// The newest format of JSON-lines segments, and the oldest this build reads.
pub(super) const LAST_TEXT_VERSION: u32 = 3;
pub(super) const OLDEST_VERSION: u32 = 2;

pub(super) const REFUSED_PREFIX: &str = "{\"refused\":";

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RefusedLine {
    pub(super) refused: Refusal,
}

impl Entry {
    #[cfg(test)]
    pub(super) fn to_json(&self) -> serde_json::Result<String> {
        match self {
            Entry::Result(r) => serde_json::to_string(r),
            Entry::Refused { worker, reason } => serde_json::to_string(&RefusedLine {
                refused: Refusal {
                    worker: worker.clone(),
                    reason: reason.clone(),
                },
            }),
        }
    }

    pub(super) fn from_json(json: &str) -> serde_json::Result<Entry> {
        if json.starts_with(REFUSED_PREFIX) {
            let line: RefusedLine = serde_json::from_str(json)?;
            return Ok(Entry::Refused {
                worker: line.refused.worker,
                reason: line.refused.reason,
            });
        }
        serde_json::from_str(json).map(Entry::Result)
    }
}

/// A record line's checksum: the first 16 hex digits of its JSON's SHA-256.
pub(super) fn checksum(json: &str) -> String {
    let mut sum = sha256_hex(json.as_bytes());
    sum.truncate(16);
    sum
}

/// Reads a JSON-lines body (versions 2 and 3): `<checksum> <JSON>` a line.
pub(super) fn read_text(
    segment: &Segment<'_>,
    header: Header,
    rest: &[u8],
    mode: Mode,
    records: &mut Vec<Entry>,
) -> Result<(), CoordinatorError> {
    let path = segment.path;
    let text = std::str::from_utf8(rest).map_err(|_| segment.damaged("not UTF-8 text".into()))?;
    let mut body: Vec<&str> = text.split_inclusive('\n').collect();
    let torn = segment.last && body.last().is_some_and(|l| !l.ends_with('\n'));
    if torn {
        body.pop();
    }
    if body.len() as u64 + u64::from(torn) != header.records {
        return Err(segment.damaged(format!(
            "{} records, the header says {}",
            body.len(),
            header.records
        )));
    }
    for (i, line) in body.iter().enumerate() {
        let line_no = i + 2;
        let line = line.strip_suffix('\n').unwrap_or(line);
        let (sum, json) = line
            .split_once(' ')
            .ok_or_else(|| segment.damaged(format!("line {line_no} has no checksum")))?;
        if checksum(json) != sum {
            return Err(segment.damaged(format!("line {line_no} fails its checksum")));
        }
        let record = Entry::from_json(json)
            .map_err(|e| segment.damaged(format!("line {line_no} is not an entry ({e})")))?;
        segment.check_seed(&record, || format!("line {line_no}"))?;
        records.push(record);
    }
    if torn && mode == Mode::Repair {
        tracing::warn!(file = %path.display(), "cutting back a torn last record");
        let header = Header {
            records: body.len() as u64,
            ..header
        };
        let mut bytes = serde_json::to_vec(&header).map_err(|source| PackError::Json {
            path: path.to_path_buf(),
            source,
        })?;
        bytes.push(b'\n');
        bytes.extend(body.iter().flat_map(|l| l.bytes()));
        let dir = path.parent().unwrap_or(Path::new("."));
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        write_durably(dir, name, &bytes)?;
    }
    Ok(())
}
