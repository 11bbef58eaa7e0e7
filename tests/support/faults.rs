//! A server that misbehaves at the byte level: for each request, a script of raw writes,
//! pauses, trickles and stalls, chosen by path. No HTTP library on this side, so the head
//! and body can be anything.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What the server does, step by step; after the last step the connection is closed,
/// whatever the head promised.
#[derive(Clone, Debug)]
pub enum Step {
    /// Writes these bytes.
    Write(Vec<u8>),
    /// Waits.
    Sleep(Duration),
    /// Writes one byte every interval, forever.
    Trickle(Duration),
    /// Never answers (the connection stays open until the client gives up).
    Stall,
}

/// The steps for a request of this path (and query).
pub type Script = Arc<dyn Fn(&str) -> Vec<Step> + Send + Sync>;

/// An HTML head of a 200 answer with `Connection: close` and these extra header lines.
pub fn html_head(extra: &str) -> Vec<u8> {
    format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n{extra}\r\n")
        .into_bytes()
}

/// A whole 200 answer of an HTML body.
pub fn ok_html(body: &str) -> Vec<u8> {
    let mut out = html_head(&format!("Content-Length: {}\r\n", body.len()));
    out.extend_from_slice(body.as_bytes());
    out
}

/// A 404 answer.
pub fn not_found() -> Vec<u8> {
    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec()
}

/// Serves `script` on a listener of its own on 127.0.0.1.
pub async fn serve_script(script: Script) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let script = Arc::clone(&script);
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&request);
                let path = head.split(' ').nth(1).unwrap_or("/").to_string();
                for step in script(&path) {
                    match step {
                        Step::Write(bytes) => {
                            if stream.write_all(&bytes).await.is_err() {
                                return;
                            }
                        }
                        Step::Sleep(d) => tokio::time::sleep(d).await,
                        Step::Trickle(every) => loop {
                            if stream.write_all(b"a").await.is_err() {
                                return;
                            }
                            tokio::time::sleep(every).await;
                        },
                        Step::Stall => {
                            let _ = stream.read(&mut buf).await;
                            return;
                        }
                    }
                }
            });
        }
    });
    addr
}
