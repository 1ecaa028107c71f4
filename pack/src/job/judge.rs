//! Whose program judges a game program's pack when it is verified: the
//! receiver's word, never the pack's. A manifest names a command, a folder
//! and an identity, and whoever wrote the manifest chose all three; running
//! them would be running the sender's code (`sh -c "..."`, or an honest
//! program given arguments that make it accept anything). So a verify runs
//! a program only as the receiver says: the job they ran (`--job`, whose id
//! must be the pack's, so its command is theirs), or their copy of the
//! program (`--program-dir`) or the copy a release carries
//! (`--trust-carried-program`), either run only through a pinned command: a
//! file of the program's identity, alone or after a plain interpreter, with
//! no arguments.

use std::path::{Component, Path};

use super::Job;
use crate::PackError;

/// Where a verify takes a game program's judge from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ProgramSource<'a> {
    /// None named: a game program's pack is not judged.
    #[default]
    Unnamed,
    /// The receiver's job file: the pack's job must be it (the same id).
    Job(&'a Path),
    /// The receiver's copy of the program, in this folder.
    Dir(&'a Path),
    /// The copy the release carries (`[release] program = true`): the
    /// sender's code, run because the receiver says so.
    Carried,
}

/// Interpreters a pinned command may name before the program's file.
const INTERPRETERS: [&str; 11] = [
    "python", "python3", "pypy3", "node", "nodejs", "bun", "ruby", "perl", "php", "sh", "bash",
];

/// What a verify names for want of a judge.
pub const NAME_A_JUDGE: &str = "a game program's pack is judged by a program you name, never \
    by the command its manifest names: --job FILE (the job that made it; its id must be the \
    pack's), or --program-dir DIR (your copy of the program)";

impl Job {
    /// The job whose game judges this job's (a manifest's) levels in a
    /// verify, `job_id` the id the manifest gives: this job itself for a
    /// built-in game; for a game program, as `source` says
    /// ([`ProgramSource`]), `carried` the folder of the copy a release
    /// carries. `Err` names what is refused and why.
    pub fn judge_for_verify(
        &self,
        job_id: &str,
        source: ProgramSource<'_>,
        carried: Option<&Path>,
    ) -> Result<Job, PackError> {
        if !self.is_external() {
            return match source {
                ProgramSource::Dir(dir) => self.with_program_dir(dir),
                _ => Ok(self.clone()),
            };
        }
        match source {
            ProgramSource::Unnamed => Err(PackError::Job(NAME_A_JUDGE.into())),
            ProgramSource::Job(path) => {
                let mine = Job::load(path)?;
                let id = mine.id();
                if id != job_id {
                    return Err(PackError::Job(format!(
                        "--job {}: its job's id is {id}, the pack's is {job_id}: not the job \
                         that made it (its command, program identity, params or seeds differ)",
                        path.display()
                    )));
                }
                Ok(mine)
            }
            ProgramSource::Dir(dir) => {
                let moved = self.with_program_dir(dir)?;
                moved.pinned()?;
                Ok(moved)
            }
            ProgramSource::Carried => {
                let Some(dir) = carried else {
                    return Err(PackError::Job(
                        "--trust-carried-program: the release carries no program".into(),
                    ));
                };
                let moved = self.with_program_dir(dir)?;
                moved.pinned()?;
                Ok(moved)
            }
        }
    }

    /// Whether the job's program (and checker) commands run only a file of
    /// their identity, alone or after a plain interpreter, with no
    /// arguments, every identity file inside the program's folder: what a
    /// verify runs from a folder the receiver names.
    fn pinned(&self) -> Result<(), PackError> {
        let Some(spec) = &self.external else {
            return Ok(());
        };
        let mut programs = vec![("game program", spec.program())];
        if let Some(checker) = spec.checker_program() {
            programs.push(("checker", checker));
        }
        for (what, program) in programs {
            let names: Vec<String> = program
                .identity_files()
                .into_iter()
                .map(|(name, _)| name)
                .collect();
            pinned_command(&program.command, &names).map_err(|why| {
                PackError::Job(format!(
                    "the pack runs its {what} as `{}`: {why}; a verify runs from a folder you \
                     name only a file of the program, alone or after an interpreter, with no \
                     arguments. To run it as its job says, give that job with --job FILE",
                    program.command.join(" ")
                ))
            })?;
        }
        Ok(())
    }
}

/// Why a command is not pinned to a program's own files.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unpinned {
    /// One of the program's files lies outside its folder.
    #[error("its file `{0}` lies outside its folder")]
    Outside(String),
    /// The command gives the program arguments.
    #[error("it passes arguments")]
    PassesArguments,
    /// An interpreter run on something other than a file of the program.
    #[error("`{0}` is not given a file of the program first")]
    NotGivenAFile(String),
    /// The command runs something that is not the program's.
    #[error("it runs a command that is not one of the program's files")]
    NotTheProgram,
}

/// Whether `command` runs one of `files` (the program's identity files,
/// each inside its folder) and nothing else: `[FILE]` or
/// `[INTERPRETER, FILE]`. `Err` says why not.
pub fn pinned_command(command: &[String], files: &[String]) -> Result<(), Unpinned> {
    if let Some(outside) = files.iter().find(|f| {
        let path = Path::new(f.as_str());
        path.is_absolute()
            || path
                .components()
                .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    }) {
        return Err(Unpinned::Outside(outside.clone()));
    }
    let is_file = |word: &str| files.iter().any(|f| f == word);
    let interpreter = |word: &str| {
        let name = Path::new(word)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(word);
        INTERPRETERS.contains(&name)
            || name
                .strip_prefix("python3.")
                .is_some_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
    };
    match command {
        [file] if is_file(file) => Ok(()),
        [run, file] if interpreter(run) && is_file(file) => Ok(()),
        [file, ..] if is_file(file) => Err(Unpinned::PassesArguments),
        [run, file, ..] if interpreter(run) && is_file(file) => Err(Unpinned::PassesArguments),
        [run, ..] if interpreter(run) => Err(Unpinned::NotGivenAFile(run.clone())),
        _ => Err(Unpinned::NotTheProgram),
    }
}

#[cfg(test)]
mod tests {
    use super::pinned_command;

    #[test]
    fn only_the_programs_own_file_is_pinned() {
        let files = ["rushhour.py".to_string(), "pregen_game.py".to_string()];
        let words = |c: &str| c.split(' ').map(String::from).collect::<Vec<_>>();
        for ok in [
            "python3 rushhour.py",
            "/usr/bin/python3.11 rushhour.py",
            "rushhour.py",
        ] {
            assert_eq!(pinned_command(&words(ok), &files), Ok(()), "{ok}");
        }
        for (refused, why) in [
            ("sh -c evil;python3", "not given a file of the program"),
            ("python3 -c import_os", "not given a file of the program"),
            ("python3 rushhour.py --lie check", "passes arguments"),
            ("env python3 rushhour.py", "not one of the program's files"),
            ("/bin/evil", "not one of the program's files"),
        ] {
            let said = pinned_command(&words(refused), &files)
                .expect_err(refused)
                .to_string();
            assert!(said.contains(why), "{refused}: {said}");
        }
        let outside = ["/usr/lib/python3/pdb.py".to_string()];
        let said = pinned_command(&words("python3 /usr/lib/python3/pdb.py"), &outside)
            .expect_err("outside")
            .to_string();
        assert!(said.contains("outside its folder"), "{said}");
        let up = ["../x.py".to_string()];
        assert!(pinned_command(&words("python3 ../x.py"), &up).is_err());
    }
}
