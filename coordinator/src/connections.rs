//! Bounded listeners: a cap on open connections, a deadline on every
//! connection until the service admits it, and the process's file limit.
//!
//! Past the cap a new connection is closed at once with a log line, and so
//! is one from an address that already holds [`per_peer`] connections not yet
//! admitted while fewer than that many places are free, or that holds any
//! while the unadmitted connections of all addresses together hold all but
//! [`per_peer`] places: a stranger who reopens connections as fast as they
//! close, from one address or many, never holds the last places, which an
//! address holding none (a worker arriving) may take, while a burst of
//! workers from one address may still use most of the cap. A
//! connection that sends nothing for [`FIRST_BYTES_WITHIN`] is closed before
//! it reaches the server. Then, until the service admits it ([`Admission`]:
//! the gRPC service does after a valid Hello), its reads and writes fail once
//! its deadline passes: a byte, half an HTTP/2 preface or half a TLS hello
//! cannot hold a place. The metrics listener admits nobody, so its deadline is
//! a connection's whole life. Idle or hostile clients cannot use up the
//! file descriptors (which the commit log needs) or the places of real
//! workers: [`raise_file_limit`] lifts the soft limit to the hard one and
//! the caps are checked against it, so accepting stops before writing would.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::time::Sleep;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::server::{Connected, TcpConnectInfo, TlsConnectInfo};

/// An accepted connection holding one of the cap's places until it closes.
#[derive(Debug)]
pub struct Counted {
    stream: TcpStream,
    _place: OwnedSemaphorePermit,
    admission: Admission,
    /// Past it, an unadmitted connection's reads and writes fail.
    deadline: Pin<Box<Sleep>>,
}

/// A connection as a request sees it: its address, and the switch that lifts
/// its deadline.
#[derive(Debug, Clone)]
pub struct Admission {
    tcp: TcpConnectInfo,
    admitted: Arc<AtomicBool>,
    /// The connection's count among its address's unadmitted ones.
    pending: Arc<Pending>,
}

impl Admission {
    /// Lifts the connection's deadline: it has shown it is a worker. It no
    /// longer counts against its address's [`per_peer`] share.
    pub fn admit(&self) {
        self.admitted.store(true, Ordering::Relaxed);
        self.pending.release();
    }

    /// The peer's address.
    pub fn remote_addr(&self) -> Option<std::net::SocketAddr> {
        self.tcp.remote_addr()
    }

    /// The first certificate the peer of a request's TLS connection showed
    /// (DER), when the server asks for client certificates.
    pub fn peer_cert<T>(request: &tonic::Request<T>) -> Option<Vec<u8>> {
        let info = request.extensions().get::<TlsConnectInfo<Admission>>()?;
        let certs = info.peer_certs()?;
        certs.first().map(|c| c.as_ref().to_vec())
    }

    /// The admission of the connection a request came on (plain or TLS).
    pub fn of<T>(request: &tonic::Request<T>) -> Option<&Admission> {
        let extensions = request.extensions();
        extensions.get::<Admission>().or_else(|| {
            extensions
                .get::<TlsConnectInfo<Admission>>()
                .map(TlsConnectInfo::get_ref)
        })
    }
}

/// A connection that sends nothing for this long after it is accepted is
/// closed, so silent clients cannot hold the cap's places.
pub const FIRST_BYTES_WITHIN: Duration = Duration::from_secs(5);

/// A gRPC connection not admitted (a valid Hello) within this long after it
/// is accepted is closed: time for a TLS handshake, HTTP/2's preface and
/// [`crate::service::HELLO_TIMEOUT`].
pub const ADMIT_WITHIN: Duration = Duration::from_secs(10);

/// Descriptors kept beyond the listeners' caps for the commit log, the pack's
/// files, the sort's runs (merged 16 at a time) and the runtime.
pub const RESERVED_FILES: u64 = 128;

/// How often connections closed at the cap are logged (with their count).
const REFUSALS_LOGGED_EVERY: Duration = Duration::from_secs(10);

/// Connections not yet admitted that one address may hold at once when
/// fewer than this many places are free: a quarter of the cap, at least one.
/// Workers hold theirs unadmitted only for a Hello (milliseconds).
pub fn per_peer(cap: usize) -> usize {
    (cap / 4).max(1)
}

/// Connections not yet admitted, per address.
type PendingTable = Arc<Mutex<HashMap<IpAddr, usize>>>;

/// One connection counted among its address's unadmitted ones until it is
/// admitted or closed.
#[derive(Debug)]
struct Pending {
    peer: IpAddr,
    table: PendingTable,
    released: AtomicBool,
}

impl Pending {
    /// Counts a connection from `peer`, unless the address already holds
    /// `most` while fewer than `most` places are `free`, or it holds any
    /// while the connections not yet admitted from every address together
    /// hold all but `most` of the `cap`: strangers on many addresses leave
    /// `most` places to an address that holds none (a worker arriving).
    fn claim(
        table: &PendingTable,
        peer: IpAddr,
        (most, cap): (usize, usize),
        free: usize,
    ) -> Option<Pending> {
        let mut counts = table.lock().unwrap_or_else(PoisonError::into_inner);
        let all: usize = counts.values().sum();
        let count = counts.entry(peer).or_default();
        if *count >= most && free < most {
            return None;
        }
        if *count > 0 && all >= cap.saturating_sub(most) {
            return None;
        }
        *count += 1;
        Some(Pending {
            peer,
            table: table.clone(),
            released: AtomicBool::new(false),
        })
    }

    /// Stops counting the connection (once).
    fn release(&self) {
        if self.released.swap(true, Ordering::Relaxed) {
            return;
        }
        let mut counts = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = counts.get_mut(&self.peer) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.peer);
            }
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.release();
    }
}

/// The connections `listener` accepts, at most `cap` open at once, each
/// handed on once it has sent its first bytes and closed `deadline` after it
/// was accepted unless admitted by then. Accepting stops when the returned
/// stream is dropped.
pub fn capped(
    listener: TcpListener,
    cap: usize,
    deadline: Duration,
) -> ReceiverStream<io::Result<Counted>> {
    let (tx, rx) = mpsc::channel(64);
    let places = Arc::new(Semaphore::new(cap));
    let pending = PendingTable::default();
    let most_per_peer = per_peer(cap);
    tokio::spawn(async move {
        // Refusals are logged once per `REFUSALS_LOGGED_EVERY`, with how many
        // there were: a stranger who reopens connections as fast as they
        // close cannot flood the log.
        let mut refused: u64 = 0;
        let mut logged: Option<tokio::time::Instant> = None;
        let mut crowding: u64 = 0;
        let mut crowding_logged: Option<tokio::time::Instant> = None;
        loop {
            let accepted = tokio::select! {
                _ = tx.closed() => return,
                accepted = listener.accept() => accepted,
            };
            let (stream, peer) = match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // E.g. out of file descriptors: wait for some to close.
                    tracing::warn!(%error, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let free = places.available_permits();
            let Some(unadmitted) = Pending::claim(&pending, peer.ip(), (most_per_peer, cap), free)
            else {
                crowding += 1;
                let now = tokio::time::Instant::now();
                if crowding_logged.is_none_or(|at| now - at >= REFUSALS_LOGGED_EVERY) {
                    tracing::warn!(
                        %peer,
                        refused = crowding,
                        most = most_per_peer,
                        "closing new connections from an address that holds its share of \
                         connections not yet admitted"
                    );
                    (crowding_logged, crowding) = (Some(now), 0);
                }
                continue;
            };
            let Ok(place) = places.clone().try_acquire_owned() else {
                refused += 1;
                let now = tokio::time::Instant::now();
                if logged.is_none_or(|at| now - at >= REFUSALS_LOGGED_EVERY) {
                    tracing::warn!(
                        cap,
                        %peer,
                        refused,
                        "connection cap reached: closing new connections (raise --max-connections \
                         and the file limit to serve more workers)"
                    );
                    (logged, refused) = (Some(now), 0);
                }
                continue;
            };
            // Replies are small frames (lease grants, acknowledgements): with
            // Nagle's algorithm on, one waits for the peer's delayed ACK, some
            // 40 ms, stalling a worker that asked for work. Tonic sets this on
            // the connections it accepts itself; these it does not see first.
            if let Err(error) = stream.set_nodelay(true) {
                tracing::debug!(%error, %peer, "cannot set TCP_NODELAY");
            }
            let tx = tx.clone();
            let ends = tokio::time::Instant::now() + deadline;
            tokio::spawn(async move {
                let mut first = [0u8; 1];
                match tokio::time::timeout(FIRST_BYTES_WITHIN, stream.peek(&mut first)).await {
                    Ok(Ok(1..)) => {
                        let admission = Admission {
                            tcp: stream.connect_info(),
                            admitted: Arc::default(),
                            pending: Arc::new(unadmitted),
                        };
                        let counted = Counted {
                            stream,
                            _place: place,
                            admission,
                            deadline: Box::pin(tokio::time::sleep_until(ends)),
                        };
                        let _ = tx.send(Ok(counted)).await;
                    }
                    _ => tracing::debug!(%peer, "closed a connection that sent nothing"),
                }
            });
        }
    });
    ReceiverStream::new(rx)
}

impl Counted {
    /// An error once the deadline has passed on a connection not admitted
    /// (the deadline's timer wakes the task that waits on the connection).
    fn expired(&mut self, cx: &mut Context<'_>) -> Option<io::Error> {
        if self.admission.admitted.load(Ordering::Relaxed) {
            return None;
        }
        self.deadline.as_mut().poll(cx).is_ready().then(|| {
            io::Error::new(
                io::ErrorKind::TimedOut,
                "the connection was not admitted in time",
            )
        })
    }
}

impl Connected for Counted {
    type ConnectInfo = Admission;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.admission.clone()
    }
}

impl AsyncRead for Counted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if let Some(e) = self.expired(cx) {
            return Poll::Ready(Err(e));
        }
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Counted {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if let Some(e) = self.expired(cx) {
            return Poll::Ready(Err(e));
        }
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if let Some(e) = self.expired(cx) {
            return Poll::Ready(Err(e));
        }
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

/// The listener `axum::serve` takes: the capped connections of a listener.
pub struct CappedListener {
    accepted: ReceiverStream<io::Result<Counted>>,
    local: std::net::SocketAddr,
}

impl CappedListener {
    /// `listener`'s connections, capped as [`capped`] does.
    pub fn new(listener: TcpListener, cap: usize, deadline: Duration) -> io::Result<Self> {
        let local = listener.local_addr()?;
        Ok(CappedListener {
            accepted: capped(listener, cap, deadline),
            local,
        })
    }
}

impl axum::serve::Listener for CappedListener {
    type Io = Counted;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        use tokio_stream::StreamExt;
        loop {
            match self.accepted.next().await {
                Some(Ok(counted)) => {
                    let peer = counted.admission.remote_addr().unwrap_or(self.local);
                    return (counted, peer);
                }
                Some(Err(_)) => continue,
                // The accepting task ended (it ends only with this stream).
                None => std::future::pending::<()>().await,
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(self.local)
    }
}

/// Lifts the soft limit on open files to the hard limit; gives the limit
/// now in force (`None` when it is unlimited or cannot be read).
pub fn raise_file_limit() -> Option<u64> {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    let raised = rustix::process::Rlimit {
        current: limit.maximum,
        maximum: limit.maximum,
    };
    if limit.current != limit.maximum
        && let Err(error) = setrlimit(Resource::Nofile, raised)
    {
        tracing::warn!(%error, "cannot raise the open-file limit to its hard limit");
        return limit.current;
    }
    limit.maximum
}

/// Checks that `connections` listeners' places and [`RESERVED_FILES`] fit in
/// the file limit `limit`.
pub fn fits_file_limit(connections: u64, limit: Option<u64>) -> Result<(), TooManyFiles> {
    match limit {
        Some(limit) if connections + RESERVED_FILES > limit => {
            Err(TooManyFiles { connections, limit })
        }
        _ => Ok(()),
    }
}

/// More connections than the open-file limit leaves room for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "{connections} connections and {RESERVED_FILES} files of the coordinator's own need more \
     descriptors than the open-file limit of {limit}: lower --max-connections to at most {} \
     or raise the hard limit (ulimit -Hn)",
    limit.saturating_sub(RESERVED_FILES + METRICS_CONNECTIONS as u64)
)]
pub struct TooManyFiles {
    /// The places asked for.
    pub connections: u64,
    /// The open-file limit.
    pub limit: u64,
}

/// Connections the metrics listener serves at once (a scraper needs one).
pub const METRICS_CONNECTIONS: usize = 16;

/// How long a metrics connection lives (a scrape takes milliseconds; a
/// scraper reconnects).
pub const METRICS_CONNECTION_LIFE: Duration = Duration::from_secs(10);

#[cfg(test)]
mod tests {
    use tokio::io::AsyncWriteExt;
    use tokio_stream::StreamExt;

    use super::*;

    #[tokio::test]
    async fn accepted_connections_send_without_delay() {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("address");
        let mut accepted = capped(listener, 4, Duration::from_secs(5));
        let mut client = TcpStream::connect(addr).await.expect("connect");
        client.write_all(b"x").await.expect("first bytes");
        let counted = accepted
            .next()
            .await
            .expect("a connection")
            .expect("accepted");
        assert!(counted.stream.nodelay().expect("TCP_NODELAY readable"));
    }
}
