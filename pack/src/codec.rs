//! The binary form of a [`SeedRecord`]: a protobuf message (prost), as the
//! commit log stores it and the external sort spills it. Every field reads
//! back bit for bit (floats as their 64 bits), and a message that does not
//! decode, or decodes to something no record can be (an unknown status, a
//! level on a seed that was not accepted), is refused.

use prost::Message;

use crate::record::{LevelRecord, SeedRecord, Status};

/// A seed's result on disk.
#[derive(Clone, PartialEq, Message)]
struct RecordProto {
    #[prost(uint64, tag = "1")]
    seed: u64,
    #[prost(uint32, tag = "2")]
    status: u32,
    #[prost(string, tag = "3")]
    reason: String,
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
}

/// An accepted level on disk.
#[derive(Clone, PartialEq, Message)]
struct LevelProto {
    #[prost(double, tag = "1")]
    difficulty: f64,
    #[prost(uint32, tag = "2")]
    moves: u32,
    #[prost(bool, tag = "3")]
    moves_optimal: bool,
    #[prost(string, tag = "4")]
    layout: String,
    #[prost(string, tag = "5")]
    level_json: String,
    #[prost(string, tag = "6")]
    solution: String,
    #[prost(string, repeated, tag = "7")]
    metric_names: Vec<String>,
    #[prost(double, repeated, tag = "8")]
    metric_values: Vec<f64>,
    #[prost(string, tag = "9")]
    level_hash: String,
    #[prost(string, optional, tag = "10")]
    canonical: Option<String>,
}

const STATUSES: [Status; 5] = [
    Status::Accepted,
    Status::Unsolvable,
    Status::Timeout,
    Status::Rejected,
    Status::Error,
];

fn status_code(status: Status) -> u32 {
    STATUSES.iter().position(|&s| s == status).unwrap_or(0) as u32
}

/// Appends `record`'s binary form to `out`.
pub fn encode(record: &SeedRecord, out: &mut Vec<u8>) {
    let proto = RecordProto {
        seed: record.seed,
        status: status_code(record.status),
        reason: record.reason.clone(),
        level: record.level.as_ref().map(|l| LevelProto {
            difficulty: l.difficulty,
            moves: l.moves,
            moves_optimal: l.moves_optimal,
            layout: l.layout.clone(),
            level_json: l.level_json.clone(),
            solution: l.solution.clone(),
            metric_names: l.metrics.keys().cloned().collect(),
            metric_values: l.metrics.values().copied().collect(),
            level_hash: l.level_hash.clone(),
            canonical: l.canonical.clone(),
        }),
        generate_ms: record.generate_ms,
        solve_ms: record.solve_ms,
        nodes: record.nodes,
        worker: record.worker.clone(),
        attempt: record.attempt,
    };
    proto
        .encode(out)
        .unwrap_or_else(|_| unreachable!("a Vec grows as needed"));
}

/// A record from its binary form, or why it is not one.
pub fn decode(bytes: &[u8]) -> Result<SeedRecord, String> {
    let proto = RecordProto::decode(bytes).map_err(|e| e.to_string())?;
    let status = *STATUSES
        .get(proto.status as usize)
        .ok_or_else(|| format!("unknown status {}", proto.status))?;
    let level = match proto.level {
        None => None,
        Some(l) => {
            if l.metric_names.len() != l.metric_values.len() {
                return Err("metric names and values differ in number".into());
            }
            Some(LevelRecord {
                difficulty: l.difficulty,
                moves: l.moves,
                moves_optimal: l.moves_optimal,
                layout: l.layout,
                level_json: l.level_json,
                solution: l.solution,
                metrics: l.metric_names.into_iter().zip(l.metric_values).collect(),
                level_hash: l.level_hash,
                canonical: l.canonical,
            })
        }
    };
    if level.is_some() != (status == Status::Accepted) {
        return Err(format!("a {} seed with{} a level", status.as_str(), {
            if level.is_some() { "" } else { "out" }
        }));
    }
    Ok(SeedRecord {
        seed: proto.seed,
        status,
        reason: proto.reason,
        level,
        generate_ms: proto.generate_ms,
        solve_ms: proto.solve_ms,
        nodes: proto.nodes,
        worker: proto.worker,
        attempt: proto.attempt,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
                reason: String::new(),
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
                reason: "watchdog".into(),
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
    fn nonsense_is_refused() {
        assert!(decode(&[0xff, 0xff]).is_err());
        let mut bytes = Vec::new();
        let bad = SeedRecord {
            seed: 1,
            status: Status::Rejected,
            reason: "x".into(),
            level: Some(level()),
            generate_ms: 0.0,
            solve_ms: 0.0,
            nodes: 0,
            worker: "w".into(),
            attempt: 1,
        };
        encode(&bad, &mut bytes);
        let err = decode(&bytes).expect_err("a rejected seed has no level");
        assert!(err.contains("rejected seed with a level"), "{err}");
    }
}
