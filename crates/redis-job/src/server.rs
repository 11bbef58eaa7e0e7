//! A `redis-server` of one's own on a loopback port, for tests and demos: one server
//! ([`LocalRedis`], with an append-only file if asked, which survives a `kill -9` and
//! restart), or a Redis Cluster of several ([`LocalCluster`]). The binary is
//! `$NEARCRAWL_REDIS_SERVER`, else `redis-server` on the PATH (Debian's `redis-server`
//! package; `scripts/test.sh` installs it).

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::JobError;

/// The environment variable naming the `redis-server` binary.
pub const SERVER_ENV: &str = "NEARCRAWL_REDIS_SERVER";

/// How long a server has to answer after it starts.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// The `redis-server` binary to run.
pub fn server_binary() -> PathBuf {
    std::env::var_os(SERVER_ENV).map_or_else(|| PathBuf::from("redis-server"), PathBuf::from)
}

fn free_port() -> Result<u16, JobError> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .map_err(|e| JobError::LocalServer(format!("no free loopback port: {e}")))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| JobError::LocalServer(e.to_string()))
}

/// One `redis-server` on 127.0.0.1, killed when dropped.
#[derive(Debug)]
pub struct LocalRedis {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
    args: Vec<String>,
}

impl LocalRedis {
    /// Starts a server; with `append_only`, every write goes to an append-only file first
    /// (`appendfsync always`), so a killed server restarts with everything it acknowledged.
    pub fn start(append_only: bool) -> Result<LocalRedis, JobError> {
        let mut args = vec![
            "--appendonly".to_string(),
            if append_only { "yes" } else { "no" }.to_string(),
        ];
        if append_only {
            args.extend(["--appendfsync".to_string(), "always".to_string()]);
        }
        LocalRedis::start_with(args)
    }

    fn start_with(args: Vec<String>) -> Result<LocalRedis, JobError> {
        let mut dir = tempfile::tempdir().map_err(|e| JobError::LocalServer(e.to_string()))?;
        let mut last = String::new();
        for _ in 0..5 {
            let mut server = LocalRedis {
                child: None,
                port: free_port()?,
                dir,
                args: args.clone(),
            };
            match server.spawn() {
                Ok(()) => return Ok(server),
                Err(err) => {
                    last = err.to_string();
                    dir = server.take_dir();
                }
            }
        }
        Err(JobError::LocalServer(last))
    }

    fn take_dir(mut self) -> tempfile::TempDir {
        self.kill();
        let placeholder = tempfile::tempdir().expect("a temporary directory");
        std::mem::replace(&mut self.dir, placeholder)
    }

    fn spawn(&mut self) -> Result<(), JobError> {
        let binary = server_binary();
        let log = self.dir.path().join("redis.log");
        let child = Command::new(&binary)
            .arg("--port")
            .arg(self.port.to_string())
            .args([
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--protected-mode",
                "no",
            ])
            .arg("--dir")
            .arg(self.dir.path())
            .arg("--logfile")
            .arg(&log)
            .args(&self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                JobError::LocalServer(format!(
                    "{}: {e} (install Debian's redis-server, or set {SERVER_ENV})",
                    binary.display()
                ))
            })?;
        self.child = Some(child);
        let started = Instant::now();
        loop {
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                let tail = std::fs::read_to_string(&log).unwrap_or_default();
                return Err(JobError::LocalServer(format!(
                    "{} exited ({status}) on port {}: {}",
                    binary.display(),
                    self.port,
                    tail.lines().last().unwrap_or("")
                )));
            }
            let answered = redis::Client::open(self.url().as_str())
                .and_then(|c| c.get_connection_with_timeout(Duration::from_millis(200)))
                .and_then(|mut c| redis::cmd("PING").query::<String>(&mut c));
            if answered.is_ok() {
                return Ok(());
            }
            if started.elapsed() > START_TIMEOUT {
                self.kill();
                return Err(JobError::LocalServer(format!(
                    "no answer on port {} after {:?}",
                    self.port, START_TIMEOUT
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `redis://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Kills the server (SIGKILL): nothing is saved but what the append-only file holds.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again, on the same port and directory (after [`LocalRedis::kill`],
    /// from its append-only file).
    pub fn restart(&mut self) -> Result<(), JobError> {
        self.kill();
        self.spawn()
    }
}

impl Drop for LocalRedis {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A Redis Cluster of `n` primaries on loopback, the 16,384 slots split evenly.
#[derive(Debug)]
pub struct LocalCluster {
    nodes: Vec<LocalRedis>,
}

impl LocalCluster {
    /// Starts `n` servers in cluster mode and joins them into one cluster.
    pub fn start(n: usize) -> Result<LocalCluster, JobError> {
        let n = n.max(1);
        let mut nodes = Vec::with_capacity(n);
        for _ in 0..n {
            nodes.push(LocalRedis::start_with(
                [
                    "--cluster-enabled",
                    "yes",
                    "--cluster-node-timeout",
                    "5000",
                    "--appendonly",
                    "no",
                ]
                .map(String::from)
                .to_vec(),
            )?);
        }
        let fail = |what: &str, e: redis::RedisError| JobError::LocalServer(format!("{what}: {e}"));
        let connect = |node: &LocalRedis| {
            redis::Client::open(node.url().as_str())
                .and_then(|c| c.get_connection())
                .map_err(|e| fail("connect", e))
        };
        const SLOTS: usize = 16_384;
        for (i, node) in nodes.iter().enumerate() {
            let mut con = connect(node)?;
            let (start, end) = (i * SLOTS / n, (i + 1) * SLOTS / n - 1);
            redis::cmd("CLUSTER")
                .arg("ADDSLOTSRANGE")
                .arg(start)
                .arg(end)
                .query::<()>(&mut con)
                .map_err(|e| fail("CLUSTER ADDSLOTSRANGE", e))?;
        }
        let mut first = connect(&nodes[0])?;
        for node in &nodes[1..] {
            redis::cmd("CLUSTER")
                .arg("MEET")
                .arg("127.0.0.1")
                .arg(node.port())
                .query::<()>(&mut first)
                .map_err(|e| fail("CLUSTER MEET", e))?;
        }
        let started = Instant::now();
        for node in &nodes {
            let mut con = connect(node)?;
            loop {
                let info: String = redis::cmd("CLUSTER")
                    .arg("INFO")
                    .query(&mut con)
                    .map_err(|e| fail("CLUSTER INFO", e))?;
                let known: usize = info
                    .lines()
                    .find_map(|l| l.strip_prefix("cluster_known_nodes:"))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                if info.contains("cluster_state:ok") && known == n {
                    break;
                }
                if started.elapsed() > START_TIMEOUT {
                    return Err(JobError::LocalServer(format!(
                        "cluster not ready after {START_TIMEOUT:?}: {info}"
                    )));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Ok(LocalCluster { nodes })
    }

    /// `redis+cluster://127.0.0.1:P1,127.0.0.1:P2,.../`.
    pub fn url(&self) -> String {
        let nodes: Vec<String> = self
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port()))
            .collect();
        format!("{}{}/", crate::connection::CLUSTER_SCHEME, nodes.join(","))
    }

    /// The nodes.
    pub fn nodes(&self) -> &[LocalRedis] {
        &self.nodes
    }
}
