//! The process's standard input and output as non-blocking pipes, read and
//! written through tokio's reactor.
//!
//! tokio's `stdin()` and `stdout()` do every read and write on the blocking
//! pool, since a terminal or a file cannot be polled: each message in and
//! each answer out is a hand-off to another thread and back. A client that
//! starts the server connects it by pipes (or, from Node.js, by Unix socket
//! pairs), which can be polled: served so, a call costs no hand-off at all
//! (docs/performance.md, "Serving over stdio").
//!
//! Non-blocking mode belongs to the pipe's open file description, which the
//! process shares with whatever else holds it. Standard error often shares
//! standard output's (`2>&1`), and a non-blocking standard error would make
//! a plain `eprintln!` fail when the pipe is full, so that case keeps
//! tokio's way, as does one socket given as both input and output (the
//! first stream released would turn the other blocking under the
//! reactor). Blocking mode comes back when serving ends, so that the rest
//! of the program finds its standard streams as they were.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::UnixStream;
use tokio::net::unix::pipe;

/// Standard input and output, when both are pipes or sockets that can be
/// made non-blocking; `None` to serve through tokio's blocking ones.
pub(crate) fn standard() -> Option<(Input, Output)> {
    let input = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let output = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
    let error = std::io::stderr().as_fd().try_clone_to_owned().ok();
    let (input_kind, input_file) = identify(&input)?;
    let (output_kind, output_file) = identify(&output)?;
    // One socket for both directions.
    if input_file == output_file {
        return None;
    }
    // Standard error on the same pipe as standard output: it would turn
    // non-blocking with it.
    if error
        .and_then(|error| identify(&error))
        .is_some_and(|(_, file)| file == output_file)
    {
        return None;
    }
    // Output first: its failure leaves nothing to undo.
    let output = Output(Some(Stream::open(output_kind, output, Direction::Write)?));
    let input = Input(Some(Stream::open(input_kind, input, Direction::Read)?));
    Some((input, output))
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Pipe,
    Socket,
}

#[derive(Clone, Copy)]
enum Direction {
    Read,
    Write,
}

/// What the descriptor is (when it is a pipe or a socket), and which file.
fn identify(fd: &OwnedFd) -> Option<(Kind, (u64, u64))> {
    let metadata = File::from(fd.try_clone().ok()?).metadata().ok()?;
    let kind = if metadata.file_type().is_fifo() {
        Kind::Pipe
    } else if metadata.file_type().is_socket() {
        Kind::Socket
    } else {
        return None;
    };
    Some((kind, (metadata.dev(), metadata.ino())))
}

/// A standard stream in non-blocking mode.
enum Stream {
    Receiver(pipe::Receiver),
    Sender(pipe::Sender),
    Socket(UnixStream),
}

impl Stream {
    fn open(kind: Kind, fd: OwnedFd, direction: Direction) -> Option<Self> {
        match (kind, direction) {
            (Kind::Pipe, Direction::Read) => {
                pipe::Receiver::from_owned_fd(fd).ok().map(Self::Receiver)
            }
            (Kind::Pipe, Direction::Write) => {
                pipe::Sender::from_owned_fd(fd).ok().map(Self::Sender)
            }
            (Kind::Socket, _) => {
                let socket = std::os::unix::net::UnixStream::from(fd);
                // A socket of another family (TCP from a super-server) is
                // left to tokio's blocking streams.
                socket.local_addr().ok()?;
                socket.set_nonblocking(true).ok()?;
                match UnixStream::from_std(socket.try_clone().ok()?) {
                    Ok(stream) => Some(Self::Socket(stream)),
                    Err(_) => {
                        let _ = socket.set_nonblocking(false);
                        None
                    }
                }
            }
        }
    }

    /// Back to blocking mode, for whoever uses the stream next.
    fn release(self) {
        let _ = match self {
            Self::Receiver(receiver) => receiver.into_blocking_fd().map(drop),
            Self::Sender(sender) => sender.into_blocking_fd().map(drop),
            Self::Socket(socket) => socket
                .into_std()
                .and_then(|socket| socket.set_nonblocking(false)),
        };
    }
}

/// Standard input, non-blocking until dropped.
pub(crate) struct Input(Option<Stream>);

/// Standard output, non-blocking until dropped.
pub(crate) struct Output(Option<Stream>);

impl Drop for Input {
    fn drop(&mut self) {
        if let Some(stream) = self.0.take() {
            stream.release();
        }
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let Some(stream) = self.0.take() {
            stream.release();
        }
    }
}

fn unusable() -> io::Error {
    io::Error::new(io::ErrorKind::Unsupported, "not a stream of this direction")
}

impl AsyncRead for Input {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.0.as_mut() {
            Some(Stream::Receiver(receiver)) => Pin::new(receiver).poll_read(cx, buf),
            Some(Stream::Socket(socket)) => Pin::new(socket).poll_read(cx, buf),
            _ => Poll::Ready(Err(unusable())),
        }
    }
}

impl Output {
    fn writer(&mut self) -> Option<Pin<&mut (dyn AsyncWrite + Send + Unpin)>> {
        match self.0.as_mut()? {
            Stream::Sender(sender) => Some(Pin::new(sender)),
            Stream::Socket(socket) => Some(Pin::new(socket)),
            Stream::Receiver(_) => None,
        }
    }
}

impl AsyncWrite for Output {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.writer() {
            Some(writer) => writer.poll_write(cx, buf),
            None => Poll::Ready(Err(unusable())),
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.writer() {
            Some(writer) => writer.poll_flush(cx),
            None => Poll::Ready(Ok(())),
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.writer() {
            Some(writer) => writer.poll_shutdown(cx),
            None => Poll::Ready(Ok(())),
        }
    }
}
