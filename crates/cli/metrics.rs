//! `--metrics ADDR`: the job's counters in the Prometheus text format at `/metrics`.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use nearcrawl_engine::Progress;
use tokio::net::TcpListener;

/// Starts serving; returns once the address is bound.
pub async fn serve(addr: SocketAddr, progress: Arc<Progress>) -> std::io::Result<()> {
    let listener = TcpListener::bind(addr).await?;
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let progress = Arc::clone(&progress);
            tokio::spawn(async move {
                let service = service_fn(move |req: Request<hyper::body::Incoming>| {
                    let progress = Arc::clone(&progress);
                    async move {
                        let (status, body) = if req.uri().path() == "/metrics" {
                            (200, progress.prometheus())
                        } else {
                            (404, "see /metrics\n".to_string())
                        };
                        Response::builder()
                            .status(status)
                            .header("content-type", "text/plain; version=0.0.4")
                            .body(Full::new(Bytes::from(body)))
                    }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok(())
}
