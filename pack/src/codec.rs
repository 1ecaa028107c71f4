//! The binary form of a [`SeedRecord`]: a protobuf message (prost), as the
//! commit log stores it and the external sort spills it. Every field reads
//! back bit for bit (floats as their 64 bits; a metric of -0 reads back as
//! 0, as it does from the wire), and a message that does not decode, or
//! decodes to something no record can be (an unknown status, a level on a
//! seed that was not accepted), is refused.
//!
//! A stored level is the wire's message, `pregen.v1.Level`
//! (`pregen-messages`): the log decodes it as that message, and its
//! encoder, which writes a record's fields in place for speed, is held to
//! the message's own encoding by the tests below.

use prost::Message;
use prost::encoding::WireType;

use crate::record::{LevelRecord, Reason, SeedRecord, Status};

/// A seed's result on disk.
#[derive(Clone, PartialEq, Message)]
struct RecordProto {
    #[prost(uint64, tag = "1")]
    seed: u64,
    #[prost(uint32, tag = "2")]
    status: u32,
    /// A reason as one line (`too easy: 3 moves < min_moves 4`), as logs
    /// before typed reasons wrote it; read, never written.
    #[prost(string, tag = "3")]
    reason_line: String,
    #[prost(message, optional, tag = "4")]
    level: Option<LevelProto>,
    #[prost(double, tag = "5")]
    generate_ms: f64,
    #[prost(double, tag = "6")]
    solve_ms: f64,
    #[prost(uint64, tag = "7")]
    nodes: u64,
    #[prost(string, tag = "8")]
    worker: String,
    #[prost(uint32, tag = "9")]
    attempt: u32,
    /// The reason's [`Code::number`] (0: none).
    #[prost(uint32, tag = "11")]
    reason_code: u32,
    #[prost(string, tag = "12")]
    reason_detail: String,
}

/// An accepted level on disk: the wire's message itself.
use pregen_messages::v1::Level as LevelProto;

fn status_code(status: Status) -> u32 {
    status.number()
}

/// Appends `record`'s binary form to `out`: the bytes `RecordProto`'s
/// encoding gives, written from the record's fields in place (a test holds
/// the two equal), for the commit log encodes every result and copying its
/// strings into a message first was most of the work.
pub fn encode(record: &SeedRecord, out: &mut Vec<u8>) {
    use prost::encoding::{double, encode_key, encode_varint, uint32, uint64};
    if record.seed != 0 {
        uint64::encode(1, &record.seed, out);
    }
    let status = status_code(record.status);
    if status != 0 {
        uint32::encode(2, &status, out);
    }
    if let Some(level) = &record.level {
        // The level's fields first, then its key and length put before them.
        let start = out.len();
        encode_level(level, out);
        let mut head = [0u8; 16];
        let mut free = &mut head[..];
        encode_key(4, WireType::LengthDelimited, &mut free);
        encode_varint((out.len() - start) as u64, &mut free);
        let used = 16 - free.len();
        out.splice(start..start, head[..used].iter().copied());
    }
    if record.generate_ms != 0.0 {
        double::encode(5, &record.generate_ms, out);
    }
    if record.solve_ms != 0.0 {
        double::encode(6, &record.solve_ms, out);
    }
    if record.nodes != 0 {
        uint64::encode(7, &record.nodes, out);
    }
    encode_str(8, &record.worker, out);
    if record.attempt != 0 {
        uint32::encode(9, &record.attempt, out);
    }
    if let Some(reason) = &record.reason {
        uint32::encode(11, &reason.code.number(), out);
        encode_str(12, &reason.detail, out);
    }
}

/// `LevelProto`'s fields of `level`, as its encoding writes them.
fn encode_level(level: &LevelRecord, out: &mut Vec<u8>) {
    use prost::encoding::{bool, double, encode_key, encode_varint, uint32};
    if level.difficulty != 0.0 {
        double::encode(1, &level.difficulty, out);
    }
    if level.moves != 0 {
        uint32::encode(2, &level.moves, out);
    }
    if level.moves_optimal {
        bool::encode(3, &level.moves_optimal, out);
    }
    encode_str(4, &level.layout, out);
    encode_str(5, &level.level_json, out);
    encode_str(6, &level.solution, out);
    for (name, value) in &level.metrics {
        // A map entry is a message of key 1 and value 2, each left out at
        // its default (an empty name, a value equal to 0), as prost writes
        // it.
        let key_len = if name.is_empty() {
            0
        } else {
            1 + prost::encoding::encoded_len_varint(name.len() as u64) + name.len()
        };
        let value_len = if *value == 0.0 { 0 } else { 9 };
        encode_key(7, WireType::LengthDelimited, out);
        encode_varint((key_len + value_len) as u64, out);
        encode_str(1, name, out);
        if *value != 0.0 {
            double::encode(2, value, out);
        }
    }
    encode_str(8, &level.level_hash, out);
    if let Some(canonical) = &level.canonical {
        encode_str(9, canonical, out);
    }
}

/// A proto3 string field: left out when empty.
fn encode_str(tag: u32, value: &str, out: &mut Vec<u8>) {
    if !value.is_empty() {
        put_str(tag, value, out);
    }
}

/// A string field, written whatever its value.
fn put_str(tag: u32, value: &str, out: &mut Vec<u8>) {
    prost::encoding::encode_key(tag, WireType::LengthDelimited, out);
    prost::encoding::encode_varint(value.len() as u64, out);
    out.extend_from_slice(value.as_bytes());
}

/// Why bytes are not a stored record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The bytes are not the message.
    #[error("{0}")]
    NotAMessage(String),
    /// A status number no status has.
    #[error("unknown status {0}")]
    UnknownStatus(u32),
    /// A reason code number no code has.
    #[error("unknown reason code {0}")]
    UnknownCode(u32),
    /// A reason line (an older log's) of no known code.
    #[error("unknown reason `{0}`")]
    UnknownReason(String),
    /// `rejected` or `error` without a reason.
    #[error("status {0} without a reason")]
    NoReason(Status),
    /// A reason on a seed whose status takes none.
    #[error("status {status} with the reason `{reason}`")]
    NeedlessReason {
        /// The status.
        status: Status,
        /// The reason.
        reason: Reason,
    },
    /// A reason code of the other status.
    #[error("status {status} with the reason code `{code}`")]
    CodeOfAnotherStatus {
        /// The status.
        status: Status,
        /// The code.
        code: crate::record::Code,
    },
    /// A level on a seed not accepted, or an accepted seed without one.
    #[error("a {status} seed with{} a level", if *.with { "" } else { "out" })]
    Level {
        /// The status.
        status: Status,
        /// Whether it has a level.
        with: bool,
    },
}

/// A record from its binary form, or why it is not one.
pub fn decode(bytes: &[u8]) -> Result<SeedRecord, DecodeError> {
    let proto = RecordProto::decode(bytes).map_err(|e| DecodeError::NotAMessage(e.to_string()))?;
    let status =
        Status::from_number(proto.status).ok_or(DecodeError::UnknownStatus(proto.status))?;
    let reason = reason_of(&proto)?;
    let refused = matches!(status, Status::Rejected | Status::Error);
    match &reason {
        None if refused => return Err(DecodeError::NoReason(status)),
        Some(r) if !refused => {
            return Err(DecodeError::NeedlessReason {
                status,
                reason: r.clone(),
            });
        }
        Some(r) if r.code.status() != status => {
            return Err(DecodeError::CodeOfAnotherStatus {
                status,
                code: r.code,
            });
        }
        _ => {}
    }
    let level = proto.level.map(LevelRecord::from);
    if level.is_some() != (status == Status::Accepted) {
        return Err(DecodeError::Level {
            status,
            with: level.is_some(),
        });
    }
    Ok(SeedRecord {
        seed: proto.seed,
        status,
        reason,
        level,
        generate_ms: proto.generate_ms,
        solve_ms: proto.solve_ms,
        nodes: proto.nodes,
        worker: proto.worker,
        attempt: proto.attempt,
    })
}

/// The reason a stored record carries: its code and detail, or, in a log
/// written before typed reasons, its one line.
fn reason_of(proto: &RecordProto) -> Result<Option<Reason>, DecodeError> {
    if proto.reason_code != 0 {
        let code = pregen_games::code_of_number(proto.reason_code)
            .ok_or(DecodeError::UnknownCode(proto.reason_code))?;
        return Ok(Some(Reason::new(code, proto.reason_detail.clone())));
    }
    if proto.reason_line.is_empty() {
        return Ok(None);
    }
    Reason::parse_line(&proto.reason_line, pregen_games::code_of_word)
        .map(Some)
        .ok_or_else(|| DecodeError::UnknownReason(proto.reason_line.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Code;

    /// `record` as the message whose encoding [`encode`] writes.
    fn to_proto(record: &SeedRecord) -> RecordProto {
        RecordProto {
            seed: record.seed,
            status: status_code(record.status),
            reason_line: String::new(),
            reason_code: record.reason.as_ref().map_or(0, |r| r.code.number()),
            reason_detail: record
                .reason
                .as_ref()
                .map_or(String::new(), |r| r.detail.clone()),
            level: record.level.clone().map(LevelProto::from),
            generate_ms: record.generate_ms,
            solve_ms: record.solve_ms,
            nodes: record.nodes,
            worker: record.worker.clone(),
            attempt: record.attempt,
        }
    }

    fn level() -> LevelRecord {
        LevelRecord {
            difficulty: 0.1 + 0.2,
            moves: 7,
            moves_optimal: false,
            layout: "#..#\n".into(),
            level_json: "{}".into(),
            solution: "LRUD".into(),
            metrics: [("states".to_string(), 12.0), ("dead".to_string(), 1.5)]
                .into_iter()
                .collect(),
            level_hash: "ab".repeat(32),
            canonical: Some("cd".into()),
        }
    }

    #[test]
    fn records_read_back_whole() {
        let records = [
            SeedRecord {
                seed: u64::MAX,
                status: Status::Accepted,
                reason: None,
                level: Some(level()),
                generate_ms: 5e-324,
                solve_ms: 1.0 / 3.0,
                nodes: 99,
                worker: "w".into(),
                attempt: 3,
            },
            SeedRecord {
                seed: 4,
                status: Status::Timeout,
                reason: None,
                level: None,
                generate_ms: f64::MAX,
                solve_ms: 0.0,
                nodes: 0,
                worker: String::new(),
                attempt: 0,
            },
        ];
        for r in records {
            let mut bytes = Vec::new();
            encode(&r, &mut bytes);
            let back = decode(&bytes).expect("decodes");
            assert_eq!(back, r);
            assert_eq!(back.solve_ms.to_bits(), r.solve_ms.to_bits());
        }
    }

    #[test]
    fn the_encoding_is_the_messages() {
        let base = SeedRecord {
            seed: 1 << 40,
            status: Status::Accepted,
            reason: None,
            level: Some(level()),
            generate_ms: 1.5,
            solve_ms: 0.25,
            nodes: 300,
            worker: "w#1".into(),
            attempt: 1,
        };
        let long = "x".repeat(200);
        let mut records = vec![base.clone()];
        let variants: Vec<fn(&mut SeedRecord, &str)> = vec![
            |r, _| r.seed = 0,
            |r, _| r.seed = u64::MAX,
            |r, _| r.generate_ms = -0.0,
            |r, _| r.solve_ms = f64::NAN,
            |r, _| r.nodes = 0,
            |r, _| r.worker = String::new(),
            |r, _| r.attempt = 0,
            |r, long| {
                r.status = Status::Rejected;
                r.reason = Some(Reason::new(Code::TooEasy, long));
                r.level = None;
            },
            |r, _| {
                r.status = Status::Error;
                r.reason = Some(Reason::new(Code::Internal, ""));
                r.level = None;
            },
        ];
        let level_variants: Vec<fn(&mut LevelRecord, &str)> = vec![
            |l, _| l.difficulty = 0.0,
            |l, _| l.difficulty = -0.0,
            |l, _| l.moves = 0,
            |l, _| l.moves = u32::MAX,
            |l, _| l.moves_optimal = true,
            |l, _| l.layout = String::new(),
            |l, long| l.level_json = long.repeat(100),
            |l, _| l.solution = String::new(),
            |l, _| l.metrics.clear(),
            |l, _| {
                l.metrics.insert(String::new(), -0.0);
            },
            |l, long| {
                l.metrics
                    .extend((0..20).map(|i| (format!("{long}{i}"), f64::from(i))));
            },
            |l, _| l.level_hash = String::new(),
            |l, _| l.canonical = None,
            |l, _| l.canonical = Some(String::new()),
        ];
        for change in level_variants {
            let mut r = base.clone();
            change(r.level.as_mut().expect("a level"), &long);
            records.push(r);
        }
        for change in variants {
            let mut r = base.clone();
            change(&mut r, &long);
            records.push(r);
        }
        for r in records {
            let mut bytes = vec![7];
            encode(&r, &mut bytes);
            assert_eq!(bytes[1..], to_proto(&r).encode_to_vec(), "{r:?}");
        }
    }

    #[test]
    fn nonsense_is_refused() {
        assert!(decode(&[0xff, 0xff]).is_err());
        let mut bytes = Vec::new();
        let bad = SeedRecord {
            seed: 1,
            status: Status::Rejected,
            reason: Some(Reason::new(pregen_games::doors::reasons::NOT_PLANAR, "x")),
            level: Some(level()),
            generate_ms: 0.0,
            solve_ms: 0.0,
            nodes: 0,
            worker: "w".into(),
            attempt: 1,
        };
        encode(&bad, &mut bytes);
        let err = decode(&bytes).expect_err("a rejected seed has no level");
        assert!(
            err.to_string().contains("rejected seed with a level"),
            "{err}"
        );
        let unsolvable = SeedRecord {
            status: Status::Unsolvable,
            level: None,
            ..bad.clone()
        };
        let error = SeedRecord {
            status: Status::Error,
            level: None,
            ..bad.clone()
        };
        let silent = SeedRecord {
            reason: None,
            level: None,
            ..bad
        };
        for (record, says) in [
            (
                unsolvable,
                "status unsolvable with the reason `not planar: x`",
            ),
            (error, "status error with the reason code `not planar`"),
            (silent, "status rejected without a reason"),
        ] {
            bytes.clear();
            encode(&record, &mut bytes);
            let err = decode(&bytes).expect_err("refused");
            assert!(err.to_string().contains(says), "{err}");
        }
        let unknown = RecordProto {
            status: status_code(Status::Rejected),
            reason_code: 250,
            ..RecordProto::default()
        };
        let err = decode(&unknown.encode_to_vec()).expect_err("unknown code");
        assert_eq!(err, DecodeError::UnknownCode(250));
    }

    #[test]
    fn logs_written_before_typed_reasons_read_back() {
        let old = RecordProto {
            seed: 9,
            status: status_code(Status::Rejected),
            reason_line: "too easy: 3 moves < min_moves 4".into(),
            ..RecordProto::default()
        };
        let record = decode(&old.encode_to_vec()).expect("decodes");
        assert_eq!(
            record.reason,
            Some(Reason::new(Code::TooEasy, "3 moves < min_moves 4"))
        );
        let unknown = RecordProto {
            reason_line: "bored: 3".into(),
            ..old
        };
        let err = decode(&unknown.encode_to_vec()).expect_err("unknown code");
        assert_eq!(err, DecodeError::UnknownReason("bored: 3".into()));
    }
}
