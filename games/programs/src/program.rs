//! A game program run and spoken to over the protocol: started once, reused
//! seed after seed, started again after it dies; past the watchdog it is
//! killed and the seed recorded as `timeout`. A response that is malformed,
//! oversized, out of order or missing is that seed's failure (status
//! `error`, code `protocol`, the detail naming the message), never a panic or
//! a hang.

use pregen_game_core::clock::Instant;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::time::Duration;

use super::{CheckMessage, Description, MAX_LINE, PROTOCOL, Request, RequestBody, ResponseBody};
use crate::group::{LIVE, adopt_orphans, kill_group};
use crate::stderr::{InFlight, NO_SEED, log_stderr};
use crate::watchdog;
use pregen_game_core::game::{Candidate, Outcome, Rejection};
use pregen_game_core::reason::Code;
use pregen_game_core::registration::CheckError;

/// How long a program may take to describe itself.
const DESCRIBE_WAIT: Duration = Duration::from_secs(30);

/// Lines of a program's stdout read ahead of pregen: a batch's answers
/// (a batch is at most 64 seeds) and one more. Past that the
/// reader waits, so a program that writes unasked holds at most this many
/// lines of pregen's memory.
const LINES_AHEAD: usize = 65;

/// How long a process that closed its stdout is given to exit before it
/// is killed.
const EXIT_WAIT: Duration = Duration::from_millis(200);

/// Why a program cannot be used at all.
#[derive(Debug, thiserror::Error)]
pub enum ProgramError {
    /// It does not start.
    #[error(
        "cannot start `{command}` in {dir}: {source} (a job's program runs in the job file's \
         folder, `external.dir` if set; a worker or `analysis verify` given `--program-dir` runs \
         its copy there)"
    )]
    Start {
        /// The command.
        command: String,
        /// The folder it was started in.
        dir: String,
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
    /// The program's own reason codes, from its description.
    codes: Vec<Code>,
    /// Batches broken and asked again alone ([`Program::pipeline`]).
    rerun: u64,
}

/// The process and its pipes: requests go to a writer thread (the caller
/// never blocks on a program that stops reading), responses come from a
/// reader thread, and the program's stderr is logged line by line with the
/// seed the program was working on.
struct Running {
    child: Child,
    requests: Sender<Vec<u8>>,
    lines: Receiver<Line>,
    /// The seeds whose answers are owed, for the log of its stderr.
    in_flight: Arc<InFlight>,
    /// What it wrote that has yet to reach `lines`, for the watchdog.
    unread: Arc<watchdog::Unread>,
}

/// A line the program wrote, or why there is none.
enum Line {
    Text(String),
    TooLong,
    Closed,
}

/// Why an exchange failed: whether the clock ran out, and what happened.
type Broken = (bool, String);

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
            codes: Vec::new(),
            rerun: 0,
        };
        program.spawn()?;
        let description = program
            .description
            .clone()
            .ok_or_else(|| ProgramError::Describe {
                command: program.label(),
                problem: "no description".into(),
            })?;
        program.codes = description
            .codes()
            .map_err(|problem| ProgramError::Describe {
                command: program.label(),
                problem,
            })?;
        Ok((program, description))
    }

    fn label(&self) -> String {
        self.command.join(" ")
    }

    /// The folder the program starts in, for messages.
    fn dir_label(&self) -> String {
        match &self.dir {
            Some(dir) => dir.display().to_string(),
            None => std::env::current_dir()
                .map_or_else(|_| "the current folder".into(), |d| d.display().to_string()),
        }
    }

    fn spawn(&mut self) -> Result<(), ProgramError> {
        if self.running.is_some() {
            return Ok(());
        }
        let Some((exe, args)) = self.command.split_first() else {
            return Err(ProgramError::Start {
                command: String::new(),
                dir: self.dir_label(),
                source: std::io::Error::other("an empty command"),
            });
        };
        let mut command = Command::new(exe);
        command
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // The SDKs then keep stdout to the protocol from their start.
            .env("PREGEN_GAME_PROTOCOL", PROTOCOL.to_string());
        if let Some(dir) = &self.dir {
            command.current_dir(dir);
        }
        adopt_orphans();
        // Its own process group, killed whole: what it forks (a shell
        // wrapper's child, a worker pool) goes with it, and what leaves the
        // group is found as its descendant or adopted as an orphan.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let start = |source| ProgramError::Start {
            command: self.label(),
            dir: self.dir_label(),
            source,
        };
        let mut child = command.spawn().map_err(start)?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            kill_group(&mut child);
            return Err(start(std::io::Error::other("no pipes")));
        };
        let (requests, to_write) = channel();
        // Bounded: a program that writes lines nobody asked for fills it
        // and is then held by its own pipe; the next answer read is a stray
        // line, a protocol error that stops the process.
        let (tx, lines) = sync_channel(LINES_AHEAD);
        let in_flight = Arc::new(InFlight::new());
        let (label, working_on) = (self.label(), in_flight.clone());
        let unread = Arc::new(watchdog::Unread::new(&stdout));
        let reading = unread.clone();
        let threads = [
            thread("pregen-program-in", move || write_requests(stdin, to_write)),
            thread("pregen-program-out", move || {
                read_lines(stdout, tx, &reading)
            }),
            thread("pregen-program-err", move || {
                log_stderr(stderr, &label, &working_on)
            }),
        ];
        if let Some(Err(e)) = threads.into_iter().find(Result::is_err) {
            kill_group(&mut child);
            return Err(start(e));
        }
        LIVE.lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(child.id());
        self.running = Some(Running {
            child,
            requests,
            lines,
            in_flight,
            unread,
        });
        // Every process describes itself first, the same each time.
        let said = self.describe()?;
        match self.description.clone() {
            Some(first) if first != said => {
                self.stop();
                Err(ProgramError::Describe {
                    command: self.label(),
                    problem: format!(
                        "it restarted as {} {}, not {} {}",
                        said.name, said.version, first.name, first.version
                    ),
                })
            }
            _ => {
                self.description = Some(said);
                Ok(())
            }
        }
    }

    fn describe(&mut self) -> Result<Description, ProgramError> {
        let label = self.label();
        let problem = |problem: String| ProgramError::Describe {
            command: label.clone(),
            problem,
        };
        let dir = self.dir_label();
        let body = self
            .ask(RequestBody::Describe { protocol: PROTOCOL }, DESCRIBE_WAIT)
            .map_err(|(_, e)| {
                // Most often a program that is not where the job says: its
                // interpreter started and found no file.
                problem(format!(
                    "{e}, started in {dir} (its stderr is in the log above; a program moved \
                     elsewhere: the job's `external.dir`, or --program-dir for a worker or a \
                     verify)"
                ))
            })?;
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

    /// Stops the process and everything in its group (the next request
    /// starts it again).
    fn stop(&mut self) {
        if let Some(mut running) = self.running.take() {
            let id = running.child.id();
            kill_group(&mut running.child);
            LIVE.lock()
                .unwrap_or_else(|e| e.into_inner())
                .retain(|p| *p != id);
        }
    }

    /// Sends one request and waits up to `wait` for its response.
    fn ask(&mut self, body: RequestBody, wait: Duration) -> Result<ResponseBody, Broken> {
        let mut answer = Err((false, "no answer".to_string()));
        self.pipeline(std::slice::from_ref(&body), wait, &mut |_, a| answer = a);
        answer
    }

    /// Sends every request at once and hands each response to `each` (with
    /// the request's index) as it comes, in order: the program works through
    /// them without waiting for pregen between two. Each response has `wait`
    /// from the moment the one before it was handled.
    ///
    /// When an exchange breaks (a crash, a kill, a stray line, a timeout),
    /// nothing that process still held counts: the process is stopped and
    /// the requests from the broken one on are sent again alone, one at a
    /// time, to a new process, each awaited before the next is written. An
    /// answer stands only as the request gets it alone, so what a program
    /// held in its buffers, or wrote by accident between two answers, never
    /// decides which requests fail: the caller sees the answers the
    /// requests get sent one by one.
    fn pipeline(
        &mut self,
        bodies: &[RequestBody],
        wait: Duration,
        each: &mut dyn FnMut(usize, Result<ResponseBody, Broken>),
    ) {
        let mut next = 0;
        let mut alone = bodies.len() == 1;
        while next < bodies.len() {
            let end = if alone { next + 1 } else { bodies.len() };
            let (from, first_id) = (next, self.next_id + 1);
            if let Err(e) = self.send(&bodies[next..end]) {
                self.stop();
                if alone {
                    each(next, Err(e));
                    next += 1;
                }
                alone = true;
                continue;
            }
            let mut clock = Instant::now();
            for (i, body) in bodies.iter().enumerate().take(end).skip(next) {
                let id = first_id + (i - from) as u64;
                let result = self.receive(id, body, clock, wait);
                if result.is_err() {
                    self.stop();
                    if !alone {
                        // Asked again alone, from this one on.
                        self.rerun += 1;
                        alone = true;
                        next = i;
                        break;
                    }
                }
                each(i, result);
                next = i + 1;
                clock = Instant::now();
            }
        }
        if let Some(running) = &self.running {
            running.in_flight.awaited.store(NO_SEED, Ordering::Relaxed);
        }
    }

    /// How many times a broken exchange had the rest of a batch asked
    /// again alone.
    pub fn reruns(&self) -> u64 {
        self.rerun
    }

    /// Writes `bodies` as requests with the next ids (starting the process
    /// first when it is not running, unless the request is `describe`).
    fn send(&mut self, bodies: &[RequestBody]) -> Result<(), Broken> {
        let mut text = Vec::new();
        for body in bodies {
            self.next_id += 1;
            let request = Request {
                id: self.next_id,
                body: body.clone(),
            };
            serde_json::to_writer(&mut text, &request).map_err(|e| (false, e.to_string()))?;
            text.push(b'\n');
        }
        let describing = matches!(bodies.first(), Some(RequestBody::Describe { .. }));
        if self.running.is_none() && !describing {
            self.spawn().map_err(|e| (false, e.to_string()))?;
        }
        let running = self
            .running
            .as_ref()
            .ok_or_else(|| (false, "the program is not running".to_string()))?;
        if let Some(RequestBody::Generate { seed, .. }) = bodies.first() {
            running.in_flight.awaited.store(*seed, Ordering::Relaxed);
        }
        if let Some(RequestBody::Generate { seed, .. }) = bodies.last() {
            running.in_flight.last_sent.store(*seed, Ordering::Relaxed);
        }
        running.requests.send(text).map_err(|_| {
            (
                false,
                "cannot write the request: the program ended".to_string(),
            )
        })
    }

    /// The response to request `id` (whose body is `body`), whose work
    /// began at `since`, within `wait` of the program's time
    /// ([`watchdog::next`]).
    fn receive(
        &mut self,
        id: u64,
        body: &RequestBody,
        since: Instant,
        wait: Duration,
    ) -> Result<ResponseBody, Broken> {
        let cpu_per_answer = !self.description.as_ref().is_some_and(|d| d.concurrent);
        let running = self
            .running
            .as_mut()
            .ok_or_else(|| (false, "the program is not running".to_string()))?;
        if let RequestBody::Generate { seed, .. } = body {
            running.in_flight.awaited.store(*seed, Ordering::Relaxed);
        }
        let text = match watchdog::next(
            &running.lines,
            running.child.id(),
            &running.unread,
            since,
            wait,
            cpu_per_answer,
        ) {
            Ok(Some(Line::Text(text))) => text,
            Ok(Some(Line::TooLong)) => {
                return Err((false, format!("a response line over {MAX_LINE} bytes")));
            }
            Ok(Some(Line::Closed) | None) => {
                // It closed its stdout: it has ended, or will never answer.
                // Never waited for past a moment (the caller stops it).
                let until = Instant::now() + EXIT_WAIT;
                let status = loop {
                    match running.child.try_wait() {
                        Ok(Some(status)) => break status.to_string(),
                        Ok(None) if Instant::now() < until => {
                            std::thread::sleep(Duration::from_millis(5));
                        }
                        _ => break "its output closed, the process still running".into(),
                    }
                };
                return Err((
                    false,
                    format!("the program ended before answering ({status})"),
                ));
            }
            Err(overtime) => return Err((true, overtime.message(wait))),
        };
        let response = super::read_response(&text).map_err(|e| (false, e.to_string()))?;
        if response.id != id {
            return Err((
                false,
                format!(
                    "the response to request {id} came for request {}",
                    response.id
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
        let mut outcome = None;
        self.generate_many(&[seed], params, max_nodes, watchdog, &mut |_, o| {
            outcome = Some(o)
        });
        outcome.unwrap_or_else(|| Outcome {
            result: Err(broken(format!("seed {seed}: no answer"))),
            generate_ms: 0.0,
            solve_ms: 0.0,
            nodes: 0,
        })
    }

    /// Runs `seeds` in the program, pipelined ([`Program::pipeline`]): each
    /// seed's outcome goes to `each` as it comes, as [`Program::generate`]
    /// gives it.
    pub fn generate_many(
        &mut self,
        seeds: &[u64],
        params: &serde_json::Value,
        max_nodes: u64,
        watchdog: Duration,
        each: &mut dyn FnMut(u64, Outcome),
    ) {
        let bodies: Vec<RequestBody> = seeds
            .iter()
            .map(|&seed| RequestBody::Generate {
                seed,
                params: params.clone(),
                max_nodes,
            })
            .collect();
        self.outcomes(
            &bodies,
            &|i| format!("seed {}", seeds[i]),
            watchdog,
            &mut |i, outcome| each(seeds[i], outcome),
        );
    }

    /// The program's solutions of `texts` (its `solve`, for a program whose
    /// description says `solves`), pipelined: each text's outcome goes to
    /// `each` as it comes, accepted with the level it read and solved.
    pub fn solve_many(
        &mut self,
        texts: &[String],
        max_nodes: u64,
        watchdog: Duration,
        each: &mut dyn FnMut(usize, Outcome),
    ) {
        let bodies: Vec<RequestBody> = texts
            .iter()
            .map(|text| RequestBody::Solve {
                params: serde_json::json!({}),
                text: text.clone(),
                max_nodes,
            })
            .collect();
        self.outcomes(&bodies, &|i| format!("level {}", i + 1), watchdog, each);
    }

    /// The outcomes of requests answered by an outcome (`generate`,
    /// `solve`), each checked as [`super::OutcomeMessage::into_outcome`] does; a
    /// broken answer that request's `protocol` error, `label` naming it.
    fn outcomes(
        &mut self,
        bodies: &[RequestBody],
        label: &dyn Fn(usize) -> String,
        watchdog: Duration,
        each: &mut dyn FnMut(usize, Outcome),
    ) {
        let mut started = Instant::now();
        let codes = self.codes.clone();
        let program = self.label();
        self.pipeline(bodies, watchdog, &mut |i, answer| {
            let seed = label(i);
            let failed = |result: Result<Candidate, Rejection>| Outcome {
                result,
                generate_ms: started.elapsed().as_secs_f64() * 1e3,
                solve_ms: 0.0,
                nodes: 0,
            };
            let outcome = match answer {
                Ok(ResponseBody::Outcome(message)) => match message.into_outcome(&codes) {
                    Ok(outcome) => outcome,
                    Err(e) => failed(Err(protocol(format!("outcome of {seed}: {e}")))),
                },
                Ok(ResponseBody::Error(e)) => {
                    failed(Err(protocol(format!("{seed}: the program says: {e}"))))
                }
                Ok(other) => failed(Err(protocol(format!(
                    "{seed}: answered with {}",
                    kind(&other)
                )))),
                Err((true, e)) => {
                    // The record says `timeout`; which of the watchdog's
                    // limits it met (CPU time, doing nothing, the wall
                    // clock's cap) is said here. A timeout restarts the
                    // process, which bounds how often this is said.
                    tracing::warn!(target: "pregen::program", program, "{seed}: timeout: {e}");
                    failed(Err(Rejection::Timeout))
                }
                Err((false, e)) => failed(Err(broken(format!("{seed}: {e}")))),
            };
            each(i, outcome);
            started = Instant::now();
        });
    }

    /// The program's check of a level these params made: `Err` names what
    /// fails (or what broke in the exchange).
    pub fn check(
        &mut self,
        params: &serde_json::Value,
        level: &Candidate,
        wait: Duration,
    ) -> Result<(), String> {
        self.check_many(params, &[level], wait)
            .pop()
            .unwrap_or_else(|| Err(CheckError::Broken("no answer".into())))
            .map_err(|e| e.to_string())
    }

    /// The program's checks of `levels`, pipelined ([`Program::pipeline`]),
    /// in order: `Err` says why the program refuses a level, or (a
    /// [`CheckError::is_broken`] one) what broke in the exchange.
    pub fn check_many(
        &mut self,
        params: &serde_json::Value,
        levels: &[&Candidate],
        wait: Duration,
    ) -> Vec<Result<(), CheckError>> {
        let bodies: Vec<RequestBody> = levels
            .iter()
            .map(|&level| RequestBody::Check {
                params: params.clone(),
                level: level.clone().into(),
            })
            .collect();
        self.verdicts(&bodies, wait)
    }

    /// The answers to requests answered by a verdict (`check`, `prepare`):
    /// `Err` says why not, or (broken) what broke in the exchange or what
    /// the program answered that is not a verdict.
    fn verdicts(&mut self, bodies: &[RequestBody], wait: Duration) -> Vec<Result<(), CheckError>> {
        let mut verdicts = Vec::with_capacity(bodies.len());
        self.pipeline(bodies, wait, &mut |i, answer| {
            let asked = match bodies[i] {
                RequestBody::Prepare { .. } => "prepare",
                _ => "check",
            };
            verdicts.push(match answer {
                Ok(ResponseBody::Check(CheckMessage { ok, reason })) if asked == "check" => {
                    ok.then_some(()).ok_or(CheckError::Program(reason))
                }
                Ok(ResponseBody::Prepare(CheckMessage { ok, reason })) if asked == "prepare" => {
                    ok.then_some(()).ok_or(CheckError::Program(reason))
                }
                Ok(ResponseBody::Error(e)) => {
                    Err(CheckError::Broken(format!("the program says: {e}")))
                }
                Ok(other) => Err(CheckError::Broken(format!(
                    "answered {asked} with {}",
                    kind(&other)
                ))),
                Err((_, e)) => Err(CheckError::Broken(e)),
            });
        });
        verdicts
    }
}

impl Program {
    /// Whether the program takes `params`: `Err` names why not (or what
    /// broke in the exchange).
    pub fn prepare(&mut self, params: &serde_json::Value, wait: Duration) -> Result<(), String> {
        let body = RequestBody::Prepare {
            params: params.clone(),
        };
        self.verdicts(&[body], wait)
            .pop()
            .unwrap_or_else(|| Err(CheckError::Broken("no answer".into())))
            .map_err(|e| e.to_string())
    }
}

impl Program {
    /// The program's picture of a level these params made: an SVG document
    /// of at most [`MAX_LINE`] bytes (its contents are the caller's to
    /// check), or what went wrong.
    pub fn render(
        &mut self,
        params: &serde_json::Value,
        level_json: &str,
        layout: &str,
        wait: Duration,
    ) -> Result<String, String> {
        let body = RequestBody::Render {
            params: params.clone(),
            level_json: level_json.to_string(),
            layout: layout.to_string(),
        };
        match self.ask(body, wait) {
            Ok(ResponseBody::Render(picture)) => Ok(picture.svg),
            Ok(ResponseBody::Error(e)) => Err(format!("the program says: {e}")),
            Ok(other) => Err(format!("answered render with {}", kind(&other))),
            Err((_, e)) => Err(format!("no picture: {e}")),
        }
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A seed's answer that breaks a rule of the protocol: its verdict (the
/// same however often it is asked).
fn protocol(detail: String) -> Rejection {
    Rejection::refused(Code::Protocol, detail)
}

/// A seed's exchange with its program that broke (a crash, a kill, a line
/// that is not its answer): no verdict ([`Code::Broken`]).
fn broken(detail: String) -> Rejection {
    Rejection::refused(Code::Broken, detail)
}

/// The kind of a response, for messages.
fn kind(body: &ResponseBody) -> &'static str {
    match body {
        ResponseBody::Describe(_) => "a description",
        ResponseBody::Outcome(_) => "an outcome",
        ResponseBody::Check(_) => "a check",
        ResponseBody::Prepare(_) => "a params check",
        ResponseBody::Render(_) => "a picture",
        ResponseBody::Error(_) => "an error",
    }
}

/// Starts a named thread.
fn thread(name: &str, work: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(work)
        .map(drop)
}

/// Writes the requests it is handed to the program's stdin until the
/// program stops reading or the [`Running`] is dropped.
fn write_requests(mut stdin: ChildStdin, requests: Receiver<Vec<u8>>) {
    for text in requests {
        if stdin.write_all(&text).and_then(|()| stdin.flush()).is_err() {
            return;
        }
    }
}

/// Hands the program's stdout on, a line at a time, each at most
/// [`MAX_LINE`] bytes (a longer one is reported and ends the reading),
/// saying in `unread` while it holds a line not yet handed over.
fn read_lines(stdout: impl Read, tx: SyncSender<Line>, unread: &watchdog::Unread) {
    let mut reader = BufReader::new(stdout);
    loop {
        // A whole line already read is held; a part of one is not (the
        // program has yet to end it).
        unread.holding(reader.buffer().contains(&b'\n'));
        let mut buf = Vec::new();
        let mut limited = (&mut reader).take(MAX_LINE as u64 + 1);
        let read = limited.read_until(b'\n', &mut buf);
        unread.holding(true);
        match read {
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
