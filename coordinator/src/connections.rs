//! A cap on open connections: past it, a new connection is closed at once
//! with a log line, and a connection that stays silent is closed after a few
//! seconds, so idle or hostile clients cannot use up the process's file
//! descriptors (which the commit log needs) or the places of real workers.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::server::{Connected, TcpConnectInfo};

/// An accepted connection holding one of the cap's places until it closes.
#[derive(Debug)]
pub struct Counted {
    stream: TcpStream,
    _place: OwnedSemaphorePermit,
}

/// A connection that sends nothing for this long after it is accepted is
/// closed, so silent clients cannot hold the cap's places.
pub const FIRST_BYTES_WITHIN: Duration = Duration::from_secs(5);

/// The connections `listener` accepts, at most `cap` open at once, each
/// handed on once it has sent its first bytes. Accepting stops when the
/// returned stream is dropped.
pub fn capped(listener: TcpListener, cap: usize) -> ReceiverStream<io::Result<Counted>> {
    let (tx, rx) = mpsc::channel(64);
    let places = Arc::new(Semaphore::new(cap));
    tokio::spawn(async move {
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
            let Ok(place) = places.clone().try_acquire_owned() else {
                tracing::warn!(
                    cap,
                    %peer,
                    "connection cap reached: closing a new connection (raise --max-connections \
                     and the file limit to serve more workers)"
                );
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
            tokio::spawn(async move {
                let mut first = [0u8; 1];
                match tokio::time::timeout(FIRST_BYTES_WITHIN, stream.peek(&mut first)).await {
                    Ok(Ok(1..)) => {
                        let counted = Counted {
                            stream,
                            _place: place,
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

impl Connected for Counted {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.stream.connect_info()
    }
}

impl AsyncRead for Counted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Counted {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
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
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncWriteExt;
    use tokio_stream::StreamExt;

    use super::*;

    #[tokio::test]
    async fn accepted_connections_send_without_delay() {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("address");
        let mut accepted = capped(listener, 4);
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
