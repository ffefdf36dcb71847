//! The first bytes of a connection, read under a deadline before hyper sees it. hyper-util's
//! automatic HTTP/1-or-2 detection waits for bytes without a timer, so a client that completes
//! a TLS handshake (or opens a plain connection) and then sends nothing would hold its
//! connection forever. Here the server reads until the bytes tell HTTP/1 from the HTTP/2
//! preface (or the whole 24-byte preface has arrived), within the header-read timeout, and
//! replays them to hyper; a silent client is closed.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};

/// The HTTP/2 client connection preface (RFC 9113 section 3.4).
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// A stream whose first bytes were read ahead and are replayed first.
#[derive(Debug)]
pub(crate) struct Prefixed<I> {
    head: Vec<u8>,
    pos: usize,
    inner: I,
}

/// Why a connection was dropped before HTTP started.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PrefaceError {
    /// Nothing decisive arrived in time.
    #[error("no request bytes within {0:?}")]
    Timeout(Duration),
    /// The peer closed or the read failed.
    #[error("connection closed before a request: {0}")]
    Io(#[from] io::Error),
}

/// Reads until HTTP/1 and HTTP/2 can be told apart, within `timeout`.
pub(crate) async fn read_ahead<I: AsyncRead + Unpin>(
    mut inner: I,
    timeout: Duration,
) -> Result<Prefixed<I>, PrefaceError> {
    let mut head = Vec::with_capacity(PREFACE.len());
    let decided = async {
        let mut buf = [0u8; 24];
        loop {
            let want = PREFACE.len() - head.len();
            let n = inner.read(&mut buf[..want]).await?;
            if n == 0 {
                return Err(io::Error::from(io::ErrorKind::UnexpectedEof));
            }
            head.extend_from_slice(&buf[..n]);
            if head.len() == PREFACE.len() || !PREFACE.starts_with(&head) {
                return Ok(());
            }
        }
    };
    match tokio::time::timeout(timeout, decided).await {
        Ok(Ok(())) => Ok(Prefixed {
            head,
            pos: 0,
            inner,
        }),
        Ok(Err(e)) => Err(PrefaceError::Io(e)),
        Err(_) => Err(PrefaceError::Timeout(timeout)),
    }
}

impl<I: AsyncRead + Unpin> AsyncRead for Prefixed<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.pos < self.head.len() {
            let n = (self.head.len() - self.pos).min(buf.remaining());
            let start = self.pos;
            buf.put_slice(&self.head[start..start + n]);
            self.pos += n;
            if self.pos == self.head.len() {
                self.head = Vec::new();
                self.pos = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for Prefixed<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}
