//! Debian's nginx serving a directory on loopback, for tests that need a real server's
//! behaviour (validators, 304s). `scripts/test.sh` installs it (nginx-light) and names it in
//! `NEARCRAWL_NGINX`; a test run without it finds `nginx` on the `PATH`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// An nginx whose servers listen on `ports` (one per server block given), stopped on drop.
pub struct Nginx {
    /// Each server's port on 127.0.0.1, in the order given.
    pub ports: Vec<u16>,
    dir: tempfile::TempDir,
}

/// The nginx binary.
fn nginx() -> PathBuf {
    std::env::var_os("NEARCRAWL_NGINX")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("nginx"))
}

/// A free port on loopback (free when asked: nginx binds it a moment later).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

impl Nginx {
    /// Serves `root` with one server per entry of `servers` (extra directives of that server
    /// block, `""` for nginx's defaults).
    pub fn serve(root: &Path, servers: &[&str]) -> Nginx {
        let dir = tempfile::tempdir().unwrap();
        let ports: Vec<u16> = servers.iter().map(|_| free_port()).collect();
        let blocks: String = servers
            .iter()
            .zip(&ports)
            .map(|(extra, port)| {
                format!(
                    "server {{ listen 127.0.0.1:{port}; root {}; {extra} }}\n",
                    root.display()
                )
            })
            .collect();
        let d = dir.path().display();
        let conf = format!(
            "worker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
             events {{ worker_connections 256; }}\n\
             http {{\n access_log off;\n types {{ text/html html; }}\n\
             client_body_temp_path {d}/body; proxy_temp_path {d}/proxy;\n\
             fastcgi_temp_path {d}/fastcgi; uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;\n\
             {blocks}}}\n"
        );
        std::fs::write(dir.path().join("nginx.conf"), conf).unwrap();
        let status = Command::new(nginx())
            .arg("-c")
            .arg(dir.path().join("nginx.conf"))
            .status()
            .unwrap_or_else(|e| {
                panic!("nginx not found ({e}): run ./scripts/test.sh, or set NEARCRAWL_NGINX")
            });
        assert!(status.success(), "nginx did not start");
        let deadline = Instant::now() + Duration::from_secs(10);
        for port in &ports {
            while std::net::TcpStream::connect(("127.0.0.1", *port)).is_err() {
                assert!(
                    Instant::now() < deadline,
                    "nginx is not listening on {port}"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        Nginx { ports, dir }
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        if let Ok(pid) = std::fs::read_to_string(self.dir.path().join("nginx.pid")) {
            let _ = Command::new("kill").arg(pid.trim()).status();
        }
    }
}
