//! A game program run and spoken to over the protocol: started once, reused
//! seed after seed, started again after it dies; past the watchdog it is
//! killed and the seed recorded as `timeout`. A response that is malformed,
//! oversized, out of order or missing is that seed's failure (status
//! `error`, code `protocol`, the detail naming the message), never a panic or
//! a hang.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use super::{CheckMessage, Description, MAX_LINE, PROTOCOL, Request, RequestBody, ResponseBody};
use crate::game::{Candidate, Outcome, Rejection};
use crate::reason::Code;

/// How long a program may take to describe itself.
const DESCRIBE_WAIT: Duration = Duration::from_secs(30);

/// Why a program cannot be used at all.
#[derive(Debug, thiserror::Error)]
pub enum ProgramError {
    /// It does not start.
    #[error("cannot start `{command}`")]
    Start {
        /// The command.
        command: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Its files cannot be read, or it names none.
    #[error("the program's identity: {0}")]
    Identity(String),
    /// Its description is missing, malformed or of another protocol.
    #[error("`{command}` does not describe itself: {problem}")]
    Describe {
        /// The command.
        command: String,
        /// What is wrong.
        problem: String,
    },
}

/// A running game program.
pub struct Program {
    command: Vec<String>,
    dir: Option<PathBuf>,
    running: Option<Running>,
    next_id: u64,
    /// What the first process said of itself; every later one must say the
    /// same (a program changed on disk is refused).
    description: Option<Description>,
}

/// The process and its pipes.
struct Running {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Line>,
}

/// A line the program wrote, or why there is none.
enum Line {
    Text(String),
    TooLong,
    Closed,
}

impl Program {
    /// Starts `command` (program and arguments) in `dir` and reads its
    /// description; refuses a program of another protocol by name.
    pub fn start(
        command: &[String],
        dir: Option<PathBuf>,
    ) -> Result<(Program, Description), ProgramError> {
        let mut program = Program {
            command: command.to_vec(),
            dir,
            running: None,
            next_id: 0,
            description: None,
        };
        program.spawn()?;
        let description = program
            .description
            .clone()
            .ok_or_else(|| ProgramError::Describe {
                command: program.label(),
                problem: "no description".into(),
            })?;
        Ok((program, description))
    }

    fn label(&self) -> String {
        self.command.join(" ")
    }

    fn spawn(&mut self) -> Result<&mut Running, ProgramError> {
        if self.running.is_none() {
            let Some((exe, args)) = self.command.split_first() else {
                return Err(ProgramError::Start {
                    command: String::new(),
                    source: std::io::Error::other("an empty command"),
                });
            };
            let mut command = Command::new(exe);
            command
                .args(args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit());
            if let Some(dir) = &self.dir {
                command.current_dir(dir);
            }
            let start = |source| ProgramError::Start {
                command: self.label(),
                source,
            };
            let mut child = command.spawn().map_err(start)?;
            let stdin = child
                .stdin
                .take()
                .ok_or_else(|| start(std::io::Error::other("no stdin")))?;
            let stdout = child
                .stdout
                .take()
                .ok_or_else(|| start(std::io::Error::other("no stdout")))?;
            let (tx, lines) = channel();
            std::thread::Builder::new()
                .name("pregen-program".into())
                .spawn(move || read_lines(stdout, tx))
                .map_err(start)?;
            self.running = Some(Running {
                child,
                stdin,
                lines,
            });
            // Every process describes itself first, the same each time.
            let said = self.describe()?;
            match self.description.clone() {
                Some(first) if first != said => {
                    self.stop();
                    return Err(ProgramError::Describe {
                        command: self.label(),
                        problem: format!(
                            "it restarted as {} {}, not {} {}",
                            said.name, said.version, first.name, first.version
                        ),
                    });
                }
                _ => self.description = Some(said),
            }
        }
        self.running.as_mut().ok_or_else(|| ProgramError::Start {
            command: String::new(),
            source: std::io::Error::other("not running"),
        })
    }

    fn describe(&mut self) -> Result<Description, ProgramError> {
        let label = self.label();
        let problem = |problem: String| ProgramError::Describe {
            command: label.clone(),
            problem,
        };
        let body = self
            .ask(RequestBody::Describe { protocol: PROTOCOL }, DESCRIBE_WAIT)
            .map_err(|(_, e)| problem(e))?;
        match body {
            ResponseBody::Describe(d) if d.protocol == PROTOCOL => Ok(d),
            ResponseBody::Describe(d) => Err(problem(format!(
                "it speaks protocol {}; this pregen speaks {PROTOCOL}",
                d.protocol
            ))),
            ResponseBody::Error(e) => Err(problem(e)),
            other => Err(problem(format!(
                "it answered describe with {}",
                kind(&other)
            ))),
        }
    }

    /// Stops the process (the next request starts it again).
    fn stop(&mut self) {
        if let Some(mut running) = self.running.take() {
            let _ = running.child.kill();
            let _ = running.child.wait();
        }
    }

    /// Sends one request and waits up to `wait` for its response. On any
    /// failure the process is stopped; the error says whether the clock ran
    /// out (`true`) and what happened.
    fn ask(&mut self, body: RequestBody, wait: Duration) -> Result<ResponseBody, (bool, String)> {
        self.next_id += 1;
        let id = self.next_id;
        let request = Request { id, body };
        let result = self.exchange(&request, wait);
        if result.is_err() {
            self.stop();
        }
        result
    }

    fn exchange(
        &mut self,
        request: &Request,
        wait: Duration,
    ) -> Result<ResponseBody, (bool, String)> {
        let mut line = serde_json::to_string(request).map_err(|e| (false, e.to_string()))?;
        line.push('\n');
        if self.running.is_none() && !matches!(request.body, RequestBody::Describe { .. }) {
            self.spawn().map_err(|e| (false, e.to_string()))?;
        }
        let running = self
            .running
            .as_mut()
            .ok_or_else(|| (false, "the program is not running".to_string()))?;
        running
            .stdin
            .write_all(line.as_bytes())
            .and_then(|()| running.stdin.flush())
            .map_err(|e| {
                (
                    false,
                    format!("cannot write the request: {e} (the program ended?)"),
                )
            })?;
        let deadline = Instant::now() + wait;
        let text = match running
            .lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            Ok(Line::Text(text)) => text,
            Ok(Line::TooLong) => {
                return Err((false, format!("a response line over {MAX_LINE} bytes")));
            }
            Ok(Line::Closed) | Err(RecvTimeoutError::Disconnected) => {
                let status = running
                    .child
                    .wait()
                    .map(|s| s.to_string())
                    .unwrap_or_default();
                return Err((
                    false,
                    format!("the program ended before answering ({status})"),
                ));
            }
            Err(RecvTimeoutError::Timeout) => {
                return Err((true, format!("no answer within {} ms", wait.as_millis())));
            }
        };
        let response = super::read_response(&text).map_err(|e| (false, e))?;
        if response.id != request.id {
            return Err((
                false,
                format!(
                    "the response to request {} came for request {}",
                    request.id, response.id
                ),
            ));
        }
        Ok(response.body)
    }

    /// Runs one seed in the program: the outcome it states, checked; past
    /// `watchdog` a `timeout`; any broken message an `error` naming it.
    pub fn generate(
        &mut self,
        seed: u64,
        params: &serde_json::Value,
        max_nodes: u64,
        watchdog: Duration,
    ) -> Outcome {
        let started = Instant::now();
        let body = RequestBody::Generate {
            seed,
            params: params.clone(),
            max_nodes,
        };
        let failed = |result: Result<Candidate, Rejection>| Outcome {
            result,
            generate_ms: started.elapsed().as_secs_f64() * 1e3,
            solve_ms: 0.0,
            nodes: 0,
        };
        match self.ask(body, watchdog) {
            Ok(ResponseBody::Outcome(message)) => match message.into_outcome() {
                Ok(outcome) => outcome,
                Err(e) => failed(Err(protocol(format!("outcome of seed {seed}: {e}")))),
            },
            Ok(ResponseBody::Error(e)) => {
                failed(Err(protocol(format!("seed {seed}: the program says: {e}"))))
            }
            Ok(other) => failed(Err(protocol(format!(
                "seed {seed}: answered with {}",
                kind(&other)
            )))),
            Err((true, _)) => failed(Err(Rejection::Timeout)),
            Err((false, e)) => failed(Err(protocol(format!("seed {seed}: {e}")))),
        }
    }

    /// The program's check of a level these params made: `Err` names what
    /// fails (or what broke in the exchange).
    pub fn check(
        &mut self,
        params: &serde_json::Value,
        level: &Candidate,
        wait: Duration,
    ) -> Result<(), String> {
        let body = RequestBody::Check {
            params: params.clone(),
            level: level.clone(),
        };
        self.verdict(body, wait)
    }

    /// The answer to a request answered by a verdict (`check`, `prepare`):
    /// `Err` says why not, or what broke in the exchange.
    fn verdict(&mut self, body: RequestBody, wait: Duration) -> Result<(), String> {
        let asked = match body {
            RequestBody::Prepare { .. } => "prepare",
            _ => "check",
        };
        match self.ask(body, wait) {
            Ok(ResponseBody::Check(CheckMessage { ok, reason })) if asked == "check" => {
                ok.then_some(()).ok_or(reason)
            }
            Ok(ResponseBody::Prepare(CheckMessage { ok, reason })) if asked == "prepare" => {
                ok.then_some(()).ok_or(reason)
            }
            Ok(ResponseBody::Error(e)) => Err(format!("the program says: {e}")),
            Ok(other) => Err(format!("answered {asked} with {}", kind(&other))),
            Err((_, e)) => Err(e),
        }
    }
}

impl Program {
    /// Whether the program takes `params`: `Err` names why not (or what
    /// broke in the exchange).
    pub fn prepare(&mut self, params: &serde_json::Value, wait: Duration) -> Result<(), String> {
        let body = RequestBody::Prepare {
            params: params.clone(),
        };
        self.verdict(body, wait)
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A seed's failure in the exchange with its program.
fn protocol(detail: String) -> Rejection {
    Rejection::refused(Code::Protocol, detail)
}

/// The kind of a response, for messages.
fn kind(body: &ResponseBody) -> &'static str {
    match body {
        ResponseBody::Describe(_) => "a description",
        ResponseBody::Outcome(_) => "an outcome",
        ResponseBody::Check(_) => "a check",
        ResponseBody::Prepare(_) => "a params check",
        ResponseBody::Error(_) => "an error",
    }
}

/// Hands the program's stdout on, a line at a time, each at most
/// [`MAX_LINE`] bytes (a longer one is reported and ends the reading).
fn read_lines(stdout: impl Read, tx: std::sync::mpsc::Sender<Line>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut buf = Vec::new();
        let mut limited = (&mut reader).take(MAX_LINE as u64 + 1);
        match limited.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => {
                let _ = tx.send(Line::Closed);
                return;
            }
            Ok(_) if buf.last() != Some(&b'\n') && buf.len() > MAX_LINE => {
                let _ = tx.send(Line::TooLong);
                return;
            }
            Ok(_) => {
                let text = String::from_utf8_lossy(&buf).trim_end().to_string();
                if text.is_empty() {
                    continue;
                }
                if tx.send(Line::Text(text)).is_err() {
                    return;
                }
            }
        }
    }
}
