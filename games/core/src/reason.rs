//! A seed's verdict as types: its [`Status`], and for a refusal the [`Code`]
//! reports count by plus the [`Reason`]'s detail. The same types travel on the
//! wire (as the proto's enums), into the commit log, into the rejects table's
//! `status`, `reason` and `reason_detail` columns, and into the coordinator's
//! counts and metrics; nothing splits a sentence to recover them.
//!
//! A new common code: a line in the `common_codes!` table here; a game's
//! own: a line in its `REASONS`. Either has its twin in the proto's
//! `ReasonCode` (a test holds the lists equal); the data dictionary lists
//! the codes from the same tables.

use std::fmt;

use serde::{Deserialize, Serialize};

/// How a seed ended. The numbers are stable: the commit log carries them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum Status {
    /// A level that passed verification and the params' filters.
    Accepted = 0,
    /// Proven to have no solution.
    Unsolvable = 1,
    /// The wall-clock watchdog fired (machine-dependent: listed in the manifest).
    Timeout = 2,
    /// Refused by a deterministic rule or budget.
    Rejected = 3,
    /// The game failed.
    Error = 4,
}

impl Status {
    /// Every status, in the order of their numbers.
    pub const ALL: [Status; 5] = [
        Status::Accepted,
        Status::Unsolvable,
        Status::Timeout,
        Status::Rejected,
        Status::Error,
    ];

    /// The status's number (the commit log's).
    pub fn number(self) -> u32 {
        u32::from(self as u8)
    }

    /// The status of a number, if any.
    pub fn from_number(number: u32) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.number() == number)
    }

    /// The word stored in Parquet and shown in counts.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Accepted => "accepted",
            Status::Unsolvable => "unsolvable",
            Status::Timeout => "timeout",
            Status::Rejected => "rejected",
            Status::Error => "error",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The kind of reason a seed was refused, without its numbers: what the
/// rejects table's `reason` column holds and what counts group by. The
/// common codes are [`Code::COMMON`]; a game declares its own beside its
/// metrics ([`crate::Game::REASONS`]), and a game program in its
/// description. The words are stable, packs and analysts' queries use them;
/// so are the numbers, which the wire and the commit log carry. Two codes
/// are the same code when their numbers are.
#[derive(Clone, Copy)]
pub struct Code {
    number: u32,
    word: &'static str,
    status: Status,
    doc: &'static str,
}

/// Declares the common codes from one table: each with its number, its
/// word, its status and its meaning (the data dictionary's).
macro_rules! common_codes {
    ($($name:ident = $number:literal, $word:literal, $status:ident, $doc:literal;)+) => {
        #[allow(non_upper_case_globals)]
        impl Code {
            $(#[doc = $doc] pub const $name: Code = Code::new($number, $word, Status::$status, $doc);)+

            /// The codes every game may give, in the order of their numbers.
            pub const COMMON: &'static [Code] = &[$(Code::$name,)+];
        }
    };
}

common_codes! {
    TooEasy = 1, "too easy", Rejected,
        "Fewer moves (or turns, pushes, complexity) than the params' minimum.";
    TooLong = 2, "too long", Rejected, "More moves than the params' maximum.";
    BudgetExhausted = 3, "budget exhausted", Rejected, "A search ran out of its `max_nodes`.";
    CapHit = 4, "cap hit", Rejected, "A generator's own cap on its steps was hit.";
    Duplicate = 19, "duplicate", Rejected,
        "The level of a lower seed of the stratum (the coordinator's verdict).";
    GeneratorPanicked = 20, "generator panicked", Error, "The generator panicked.";
    VerifierPanicked = 21, "verifier panicked", Error, "The verifier panicked.";
    MalformedLevel = 22, "malformed level", Error,
        "A level that does not hold together (its text, JSON or grid).";
    Rating = 23, "rating failed", Error, "The rating model could not rate the level's metrics.";
    Internal = 24, "internal error", Error, "A game's internal check failed.";
    Protocol = 25, "protocol", Error,
        "An external game program's answer broke a rule of the protocol (the detail names the rule: a layout without its final newline, an unknown reason code, a wrong level hash, ...).";
    Oversize = 26, "oversize", Error,
        "The seed's outcome breaks a cap of the wire (a level, solution or reason too large, too many metrics): decided by the worker that made it.";
    OutOfBand = 27, "out of band", Rejected,
        "A level whose difficulty lies outside its stratum's `difficulty` band (the coordinator's verdict; the detail gives the difficulty and the band).";
    Broken = 28, "broken", Error,
        "The exchange with an external game program broke on the seed even asked alone (a crash, a kill, a line that is not the answer): never a seed's verdict in a pack; the coordinator runs the seed itself, and a seed that breaks there too stops the run.";
}

/// `text` as a `&'static str`, one allocation per distinct text for the
/// process's life: how a game program's name, reason words and metric docs
/// become the `Copy` identifiers ([`Code`], [`crate::MetricDoc`]) that
/// counts and tables key by. The texts are few and short (a program's
/// description), and a program registered again, or another of the same
/// names, adds nothing; the program itself is not held here.
pub fn intern(text: &str) -> &'static str {
    static TEXTS: std::sync::Mutex<std::collections::BTreeSet<&'static str>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    let mut texts = TEXTS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&known) = texts.get(text) {
        return known;
    }
    let text: &'static str = Box::leak(text.to_string().into_boxed_str());
    texts.insert(text);
    text
}

impl Code {
    /// A code: its number (never 0), its word (without `:`), the status its
    /// reasons go with (`rejected` or `error`) and what it means. A game
    /// declares its own in [`crate::Game::REASONS`], numbered apart from
    /// every other game's (the registry's tests hold them apart). Built-in
    /// codes are numbered below 1,000; a game program's own from 1,000 to
    /// below 2^16.
    pub const fn new(number: u32, word: &'static str, status: Status, doc: &'static str) -> Code {
        Code {
            number,
            word,
            status,
            doc,
        }
    }

    /// The code's word, as the rejects table's `reason` column holds it.
    pub fn as_str(self) -> &'static str {
        self.word
    }

    /// The status a reason of this code goes with.
    pub fn status(self) -> Status {
        self.status
    }

    /// What the code means.
    pub fn doc(self) -> &'static str {
        self.doc
    }

    /// The code's number on the wire and in the commit log (never 0).
    pub fn number(self) -> u32 {
        self.number
    }

    /// The common code whose word is `word`.
    pub fn common(word: &str) -> Option<Code> {
        Code::COMMON.iter().copied().find(|c| c.word == word)
    }
}

impl PartialEq for Code {
    fn eq(&self, other: &Code) -> bool {
        self.number == other.number
    }
}

impl Eq for Code {}

impl std::hash::Hash for Code {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.number.hash(state);
    }
}

impl PartialOrd for Code {
    fn partial_cmp(&self, other: &Code) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Code {
    fn cmp(&self, other: &Code) -> std::cmp::Ordering {
        self.number.cmp(&other.number)
    }
}

impl fmt::Debug for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Code({} {:?})", self.number, self.word)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a seed was refused: its code and the particulars, e.g. code
/// [`Code::TooEasy`] with the detail `3 moves < min_moves 4`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reason {
    /// The kind of reason.
    pub code: Code,
    /// The particulars (may be empty).
    pub detail: String,
}

impl Reason {
    /// A reason of `code` with `detail`.
    pub fn new(code: Code, detail: impl Into<String>) -> Reason {
        Reason {
            code,
            detail: detail.into(),
        }
    }

    /// A reason as one line of text (`too easy: 3 moves < min_moves 4`) read
    /// back: the code before the first `:`, the detail after. `None` when the
    /// code is unknown. The form commit logs before typed reasons stored.
    /// `known` finds a code by its word.
    pub fn parse_line(line: &str, known: impl Fn(&str) -> Option<Code>) -> Option<Reason> {
        let (code, detail) = line.split_once(':').unwrap_or((line, ""));
        Some(Reason::new(known(code.trim())?, detail.trim()))
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.detail.as_str() {
            "" => write!(f, "{}", self.code),
            detail => write!(f, "{}: {detail}", self.code),
        }
    }
}

/// How a seed that was not accepted is counted: its status and, for a
/// refusal, its code (`rejected: too easy`, or `unsolvable`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Refusal {
    /// The status.
    pub status: Status,
    /// The code, for `rejected` and `error`.
    pub code: Option<Code>,
}

impl Refusal {
    /// The count a duplicate level goes to.
    pub const DUPLICATE: Refusal = Refusal {
        status: Status::Rejected,
        code: Some(Code::Duplicate),
    };
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.code {
            None => write!(f, "{}", self.status),
            Some(code) => write!(f, "{}: {code}", self.status),
        }
    }
}

impl Serialize for Refusal {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The commit log stores a status by its number: the numbers are pinned.
    #[test]
    fn statuses_keep_their_numbers() {
        let numbers: Vec<u32> = Status::ALL.iter().map(|s| s.number()).collect();
        assert_eq!(numbers, [0, 1, 2, 3, 4]);
        for status in Status::ALL {
            assert_eq!(Status::from_number(status.number()), Some(status));
        }
        assert_eq!(Status::from_number(5), None);
    }

    #[test]
    fn common_codes_read_back_from_their_words() {
        for &code in Code::COMMON {
            assert_ne!(code.number(), 0);
            assert_eq!(Code::common(code.as_str()), Some(code));
            assert!(!code.as_str().contains(':'), "{code}");
        }
    }

    #[test]
    fn a_line_splits_into_code_and_detail() {
        let r = Reason::parse_line("too easy: 3 moves < min_moves 4", Code::common)
            .expect("known code");
        assert_eq!(
            (r.code, r.detail.as_str()),
            (Code::TooEasy, "3 moves < min_moves 4")
        );
        assert_eq!(r.to_string(), "too easy: 3 moves < min_moves 4");
        let bare = Reason::parse_line("duplicate", Code::common).expect("known code");
        assert_eq!((bare.code, bare.detail.as_str()), (Code::Duplicate, ""));
        assert_eq!(Reason::parse_line("no such code: 3", Code::common), None);
    }

    #[test]
    fn refusals_count_by_status_and_code() {
        assert_eq!(Refusal::DUPLICATE.to_string(), "rejected: duplicate");
        let unsolvable = Refusal {
            status: Status::Unsolvable,
            code: None,
        };
        assert_eq!(unsolvable.to_string(), "unsolvable");
        assert_eq!(Code::MalformedLevel.status(), Status::Error);
        assert_eq!(Code::TooEasy.status(), Status::Rejected);
    }
}
