//! Serving one client over this process's stdin and stdout (the client spawned this process).
//!
//! The host passes its own duplicates of stdin and stdout, so it can point file descriptor 1
//! at stderr: a tool that prints then cannot corrupt the protocol stream.
//!
//! A client may hand its child any kind of descriptor: a shell or Python's `subprocess` gives
//! pipes, Node's `child_process` (so desktop MCP hosts and the MCP Inspector) gives Unix
//! sockets, a terminal gives a tty, a redirect gives a regular file or `/dev/null`. Pipes and
//! sockets are served through tokio's reactor; anything else (a tty, a file, a character
//! device) through tokio's blocking-pool file, which never puts a descriptor the process shares
//! with its terminal into non-blocking mode. A stdin that ends before a session began (an
//! empty file, `/dev/null`, lines that are no MCP handshake) is a clear error, not a hang.

use super::handler::Served;
use super::hub::Hub;
use rmcp::service::ServerInitializeError;
use rmcp::ServiceExt;
use std::os::fd::OwnedFd;
use std::os::unix::fs::FileTypeExt;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;

type Reader = Box<dyn AsyncRead + Send + Unpin>;
type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// What a standard stream is, as far as serving over it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Pipe,
    Socket,
    /// A tty, a regular file, a character device such as `/dev/null`.
    Other,
}

fn kind_of(fd: OwnedFd) -> std::io::Result<(Kind, OwnedFd)> {
    let file = std::fs::File::from(fd);
    let kind = file.metadata()?.file_type();
    let kind = if kind.is_fifo() {
        Kind::Pipe
    } else if kind.is_socket() {
        Kind::Socket
    } else {
        Kind::Other
    };
    Ok((kind, OwnedFd::from(file)))
}

fn socket(fd: OwnedFd) -> std::io::Result<tokio::net::UnixStream> {
    let stream = std::os::unix::net::UnixStream::from(fd);
    stream.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(stream)
}

fn reader(fd: OwnedFd) -> std::io::Result<Reader> {
    Ok(match kind_of(fd)? {
        (Kind::Pipe, fd) => Box::new(pipe::Receiver::from_owned_fd(fd)?),
        (Kind::Socket, fd) => Box::new(socket(fd)?),
        (Kind::Other, fd) => Box::new(tokio::fs::File::from_std(std::fs::File::from(fd))),
    })
}

fn writer(fd: OwnedFd) -> std::io::Result<Writer> {
    Ok(match kind_of(fd)? {
        (Kind::Pipe, fd) => Box::new(pipe::Sender::from_owned_fd(fd)?),
        (Kind::Socket, fd) => Box::new(socket(fd)?),
        (Kind::Other, fd) => Box::new(tokio::fs::File::from_std(std::fs::File::from(fd))),
    })
}

/// Serve until the client closes its end (or the hub stops). `read` and `write` may be pipes,
/// sockets, ttys or files.
pub async fn serve_stdio(hub: Arc<Hub>, read: OwnedFd, write: OwnedFd) -> std::io::Result<()> {
    let (rx, tx) = (reader(read)?, writer(write)?);
    let stop = hub.stop_token().clone();
    let running =
        Served::new(hub).serve((rx, tx)).await.map_err(|e| {
            match e {
        ServerInitializeError::ConnectionClosed(_) => std::io::Error::other(
            "stdin ended before an MCP client opened a session (serving over stdio needs an MCP \
             client on stdin and stdout; stdin was empty, /dev/null, or held no initialize \
             request)",
        ),
        other => std::io::Error::other(format!("MCP handshake failed: {other}")),
    }
        })?;
    let cancel = running.cancellation_token();
    tokio::select! {
        _ = running.waiting() => {}
        () = stop.cancelled() => cancel.cancel(),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn pipes_sockets_and_files_are_told_apart() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        assert_eq!(kind_of(OwnedFd::from(a)).unwrap().0, Kind::Socket);
        let (r, _w) = std::io::pipe().unwrap();
        assert_eq!(kind_of(OwnedFd::from(r)).unwrap().0, Kind::Pipe);
        let null = std::fs::File::open("/dev/null").unwrap();
        assert_eq!(kind_of(OwnedFd::from(null)).unwrap().0, Kind::Other);
    }

    fn hub() -> Arc<Hub> {
        let identity = super::super::Identity {
            name: "t".into(),
            version: "1".into(),
            instructions: None,
        };
        Hub::new(identity, None).unwrap()
    }

    #[tokio::test]
    async fn an_empty_stdin_is_a_clear_error_not_a_hang() {
        let dir = std::env::temp_dir().join(format!("am-stdio-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty");
        std::fs::File::create(&empty).unwrap().flush().unwrap();
        let read = OwnedFd::from(std::fs::File::open(&empty).unwrap());
        let write = OwnedFd::from(std::fs::File::create(dir.join("out")).unwrap());
        let err = serve_stdio(hub(), read, write).await.unwrap_err();
        assert!(
            err.to_string()
                .contains("stdin ended before an MCP client opened a session"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
