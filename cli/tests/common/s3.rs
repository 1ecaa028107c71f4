//! The S3 servers for the object-store tests (moto's and s3s-fs, from
//! `pregen_store::testing`), and a proxy before it that can stop answering
//! or answer `503 Slow Down` on demand, as a failing store does.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pregen_store::Remote;
pub use pregen_store::testing::{Kind, S3Server};

use super::needs::{Need, needs};

/// Every S3 test server this machine has, started (a missing one skips
/// its part of the test, with a line saying so).
pub fn s3_servers() -> Vec<S3Server> {
    Kind::ALL
        .into_iter()
        .filter(|&kind| needs(&[Need::S3(kind)]))
        .map(|kind| S3Server::start_kind(kind).expect("start the S3 test server"))
        .collect()
}

/// `command` with the environment that reaches `endpoint` as `server`'s client.
pub fn with_store<'c>(
    command: &'c mut Command,
    server: &S3Server,
    endpoint: &str,
) -> &'c mut Command {
    for (key, value) in server.env() {
        command.env(key, value);
    }
    command.env("AWS_ENDPOINT_URL", endpoint)
}

/// The prefix `url` of `server`, for the test's own reads.
pub fn remote(server: &S3Server, url: &str) -> Remote {
    Remote::with_options(url, &server.env()).expect("a valid URL")
}

/// What the proxy does with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Mode {
    /// Passes it on.
    Pass = 0,
    /// Closes the connection unanswered (a store stopped).
    Down = 1,
    /// Answers `503 Slow Down`.
    Busy = 2,
}

/// A TCP proxy before an S3 server, on a free loopback port.
pub struct Proxy {
    pub endpoint: String,
    mode: Arc<AtomicU8>,
    live: Arc<Mutex<Vec<TcpStream>>>,
    stop: Arc<AtomicBool>,
}

impl Proxy {
    pub fn before(upstream: &str) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let endpoint = format!("http://{}", listener.local_addr().expect("its address"));
        let upstream = upstream.trim_start_matches("http://").to_string();
        listener.set_nonblocking(true).expect("nonblocking");
        let proxy = Proxy {
            endpoint,
            mode: Arc::new(AtomicU8::new(Mode::Pass as u8)),
            live: Arc::default(),
            stop: Arc::default(),
        };
        let (mode, live, stop) = (proxy.mode.clone(), proxy.live.clone(), proxy.stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((client, _)) => {
                        let _ = client.set_nonblocking(false);
                        serve(client, &upstream, mode.load(Ordering::Relaxed), &live);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        proxy
    }

    /// From now on, `mode`; a store that goes down or busy drops every
    /// connection open through it.
    pub fn set(&self, mode: Mode) {
        self.mode.store(mode as u8, Ordering::Relaxed);
        if mode != Mode::Pass {
            for stream in self.live.lock().expect("live").drain(..) {
                let _ = stream.shutdown(Shutdown::Both);
            }
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.set(Mode::Down);
    }
}

fn serve(mut client: TcpStream, upstream: &str, mode: u8, live: &Arc<Mutex<Vec<TcpStream>>>) {
    if mode == Mode::Down as u8 {
        return;
    }
    if mode == Mode::Busy as u8 {
        std::thread::spawn(move || {
            let _ = client.set_read_timeout(Some(Duration::from_millis(300)));
            let mut buffer = [0; 4096];
            let _ = client.read(&mut buffer);
            let body = "<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>";
            let _ = write!(
                client,
                "HTTP/1.1 503 Slow Down\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        });
        return;
    }
    let Ok(server) = TcpStream::connect(upstream) else {
        return;
    };
    if let (Ok(c), Ok(s)) = (client.try_clone(), server.try_clone()) {
        live.lock().expect("live").extend([c, s]);
    }
    let (Ok(mut client_read), Ok(mut server_write)) = (client.try_clone(), server.try_clone())
    else {
        return;
    };
    let (mut server_read, mut client_write) = (server, client);
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut client_read, &mut server_write);
        let _ = server_write.shutdown(Shutdown::Write);
    });
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut server_read, &mut client_write);
        let _ = client_write.shutdown(Shutdown::Write);
    });
}
