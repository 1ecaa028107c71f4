//! S3 servers for tests, started on a free loopback port with one bucket
//! and stopped when dropped: moto's (`pip install 'moto[server]'`), which
//! takes any credentials and keeps its objects in memory, and `s3s-fs`
//! (`cargo install s3s-fs --features binary`), an independent
//! implementation that checks the credentials and keeps its objects in a
//! folder, so it can be stopped and started again mid-run. Tests that need
//! one check [`Kind::available`] first.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The bucket every test server has.
pub const BUCKET: &str = "pregen-test";
/// The credentials a client of a test server uses.
pub const KEY: (&str, &str) = ("pregen-test-key", "pregen-test-secret");

/// Which S3 server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// moto's server (`moto_server`).
    Moto,
    /// `s3s-fs`.
    S3sFs,
}

impl Kind {
    /// Both servers.
    pub const ALL: [Kind; 2] = [Kind::Moto, Kind::S3sFs];

    fn program(self) -> &'static str {
        match self {
            Kind::Moto => "moto_server",
            Kind::S3sFs => "s3s-fs",
        }
    }

    /// Whether the server can be started here.
    pub fn available(self) -> bool {
        Command::new(self.program())
            .arg("--help")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Its name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Moto => "moto",
            Kind::S3sFs => "s3s-fs",
        }
    }
}

/// A running S3 test server.
#[derive(Debug)]
pub struct S3Server {
    kind: Kind,
    child: Option<Child>,
    port: u16,
    /// s3s-fs's folder.
    root: Option<tempfile::TempDir>,
}

impl S3Server {
    /// Whether moto's server can be started here.
    pub fn available() -> bool {
        Kind::Moto.available()
    }

    /// Starts moto's server with the bucket [`BUCKET`].
    pub fn start() -> std::io::Result<S3Server> {
        Self::start_kind(Kind::Moto)
    }

    /// Starts a server of `kind` with the bucket [`BUCKET`].
    pub fn start_kind(kind: Kind) -> std::io::Result<S3Server> {
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let root = match kind {
            Kind::Moto => None,
            Kind::S3sFs => {
                let root = tempfile::tempdir()?;
                std::fs::create_dir(root.path().join(BUCKET))?;
                Some(root)
            }
        };
        let mut server = S3Server {
            kind,
            child: None,
            port,
            root,
        };
        server.resume()?;
        if kind == Kind::Moto {
            server.request("PUT", &format!("/{BUCKET}"))?;
        }
        Ok(server)
    }

    /// Stops the server (s3s-fs keeps its objects for [`S3Server::resume`]).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on its port.
    pub fn resume(&mut self) -> std::io::Result<()> {
        let mut command = Command::new(self.kind.program());
        match (&self.kind, &self.root) {
            (Kind::S3sFs, Some(root)) => command
                .args(["--host", "127.0.0.1", "--port", &self.port.to_string()])
                .args(["--access-key", KEY.0, "--secret-key", KEY.1])
                .arg(root.path()),
            _ => command.args(["-H", "127.0.0.1", "-p", &self.port.to_string()]),
        };
        self.child = Some(
            command
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()?,
        );
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if started.elapsed() > Duration::from_secs(30) {
                return Err(std::io::Error::other(
                    "the S3 test server did not start in 30 s",
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }

    /// Which server this is.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The server's endpoint, `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `s3://pregen-test/<prefix>`.
    pub fn url(&self, prefix: &str) -> String {
        format!("s3://{BUCKET}/{prefix}")
    }

    /// Where s3s-fs keeps the bucket's objects (`None` for moto).
    pub fn folder(&self) -> Option<PathBuf> {
        self.root.as_ref().map(|r| r.path().join(BUCKET))
    }

    /// The environment a client needs to reach it.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT_URL", self.endpoint()),
            ("AWS_ACCESS_KEY_ID", KEY.0.into()),
            ("AWS_SECRET_ACCESS_KEY", KEY.1.into()),
            ("AWS_REGION", "us-east-1".into()),
        ]
    }

    /// An unsigned request (moto takes them), its status line.
    fn request(&self, method: &str, path: &str) -> std::io::Result<String> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port))?;
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            self.port
        )?;
        let mut answer = String::new();
        stream.read_to_string(&mut answer)?;
        Ok(answer.lines().next().unwrap_or_default().to_string())
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        self.stop();
    }
}
