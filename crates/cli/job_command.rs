//! `nearcrawl job status|stop|report --redis URL --job NAME`: a job shared by several workers
//! (`nearcrawl crawl --redis URL --job NAME`), seen from outside any worker.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use nearcrawl_records::Report;
use nearcrawl_redis_job::{JobName, Patience, Redis, RedisTarget};
use serde::Serialize;

/// Where the job is.
#[derive(Args, Debug)]
pub struct JobAddress {
    /// The job's Redis: redis://HOST:PORT/ or redis+cluster://HOST:PORT,HOST:PORT/.
    #[arg(long)]
    pub redis: String,
    /// The job's name.
    #[arg(long)]
    pub job: String,
}

/// What to do with the job.
#[derive(Subcommand, Debug)]
pub enum JobAction {
    /// The job's figures now: state, hosts, URLs queued, leased and seen, expired leases,
    /// hosts given up, workers and their last contact (`job report` has the pages and bytes).
    Status {
        #[command(flatten)]
        address: JobAddress,
    },
    /// Stop the job: each worker finishes what it is fetching, writes its outputs and exits.
    Stop {
        #[command(flatten)]
        address: JobAddress,
    },
    /// Merge the reports the workers kept in the job when they finished: totals and one line
    /// per worker (also written as JSON to --out).
    Report {
        #[command(flatten)]
        address: JobAddress,
        /// Write the merged report here (JSON).
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

fn connect(address: &JobAddress) -> Result<(Redis, JobName)> {
    let job = JobName::new(&address.job)?;
    let target = RedisTarget::parse(&address.redis)?;
    let redis = Redis::connect(target, Patience::default(), Arc::default())?;
    Ok((redis, job))
}

/// Runs `nearcrawl job ACTION`.
pub fn job_command(action: &JobAction) -> Result<()> {
    match action {
        JobAction::Status { address } => {
            let (mut redis, job) = connect(address)?;
            let status = nearcrawl_redis_job::job_status(&mut redis, &job)?;
            if status.state == "missing" {
                anyhow::bail!("job {job}: no such job on {}", address.redis);
            }
            println!(
                "job {job}: {}{}",
                status.state,
                if status.seeded { "" } else { " (seeding)" }
            );
            println!(
                "hosts: {} ({} with work)  queued: {}  leased: {}  seen: {}",
                status.hosts, status.hosts_with_work, status.queued, status.leased, status.seen
            );
            println!(
                "leases expired and requeued: {}  hosts given up: {}",
                status.reclaimed, status.parked
            );
            for (worker, at) in &status.workers {
                println!("worker {worker}: last asked for work at {at} ms (server clock)");
            }
            Ok(())
        }
        JobAction::Stop { address } => {
            let (mut redis, job) = connect(address)?;
            if !nearcrawl_redis_job::stop_job(&mut redis, &job)? {
                anyhow::bail!("job {job}: no such job on {}", address.redis);
            }
            println!("job {job}: stopped; its workers finish what they are fetching and exit");
            Ok(())
        }
        JobAction::Report { address, out } => {
            let (mut redis, job) = connect(address)?;
            let reports = nearcrawl_redis_job::job_reports(&mut redis, &job)?;
            if reports.is_empty() {
                anyhow::bail!(
                    "job {job}: no worker has finished yet (each keeps its report in the job \
                     when it ends)"
                );
            }
            let mut parsed = Vec::with_capacity(reports.len());
            for (worker, text) in &reports {
                let report: Report = serde_json::from_str(text)
                    .with_context(|| format!("job {job}: the report of worker {worker}"))?;
                parsed.push((worker.clone(), report));
            }
            let merged = MergedReport::of(&job, &parsed);
            print!("{}", merged.summary());
            if let Some(path) = out {
                let text = serde_json::to_string_pretty(&merged)?;
                std::fs::write(path, text + "\n")
                    .with_context(|| format!("cannot write {}", path.display()))?;
                println!("merged report: {}", path.display());
            }
            Ok(())
        }
    }
}

/// The workers' reports added up.
#[derive(Debug, Default, Serialize)]
struct MergedReport {
    job: String,
    workers: Vec<WorkerLine>,
    decisions: u64,
    pages_fetched: u64,
    bytes_fetched: u64,
    robots_bytes: u64,
    duplicate_bytes: u64,
    by_verdict: BTreeMap<String, u64>,
    by_status: BTreeMap<String, u64>,
    index_conflicts: u64,
    stale_leases: u64,
    redis_retries: u64,
    redis_reconnects: u64,
}

#[derive(Debug, Serialize)]
struct WorkerLine {
    worker: String,
    decisions: u64,
    pages_fetched: u64,
    bytes_fetched: u64,
    run_seconds: f64,
    interrupted: bool,
}

fn add_all(into: &mut BTreeMap<String, u64>, from: &BTreeMap<String, u64>) {
    for (name, n) in from {
        *into.entry(name.clone()).or_default() += n;
    }
}

impl MergedReport {
    fn of(job: &JobName, reports: &[(String, Report)]) -> MergedReport {
        let mut merged = MergedReport {
            job: job.to_string(),
            ..MergedReport::default()
        };
        for (worker, report) in reports {
            merged.workers.push(WorkerLine {
                worker: worker.clone(),
                decisions: report.decisions,
                pages_fetched: report.pages_fetched,
                bytes_fetched: report.bytes_fetched,
                run_seconds: report.run_seconds,
                interrupted: report.interrupted,
            });
            merged.decisions += report.decisions;
            merged.pages_fetched += report.pages_fetched;
            merged.bytes_fetched += report.bytes_fetched;
            merged.robots_bytes += report.robots_bytes;
            merged.duplicate_bytes += report.duplicate_bytes;
            add_all(&mut merged.by_verdict, &report.by_verdict);
            add_all(&mut merged.by_status, &report.by_status);
            if let Some(shared) = &report.shared_job {
                merged.index_conflicts += shared.index_conflicts;
                merged.stale_leases += shared.stale_leases;
                merged.redis_retries += shared.redis_retries;
                merged.redis_reconnects += shared.redis_reconnects;
            }
        }
        merged
    }

    fn summary(&self) -> String {
        let mut out = format!(
            "job {}: {} workers, {} decisions, {} pages fetched, {} bytes ({} on duplicates)\n",
            self.job,
            self.workers.len(),
            self.decisions,
            self.pages_fetched,
            self.bytes_fetched,
            self.duplicate_bytes
        );
        let verdicts: Vec<String> = self
            .by_verdict
            .iter()
            .map(|(v, n)| format!("{v} {n}"))
            .collect();
        out += &format!("verdicts: {}\n", verdicts.join(", "));
        out += &format!(
            "faults: {} index conflicts, {} stale leases, {} Redis retries, {} reconnects\n",
            self.index_conflicts, self.stale_leases, self.redis_retries, self.redis_reconnects
        );
        for w in &self.workers {
            out += &format!(
                "worker {}: {} decisions, {} pages, {} bytes in {:.1} s{}\n",
                w.worker,
                w.decisions,
                w.pages_fetched,
                w.bytes_fetched,
                w.run_seconds,
                if w.interrupted { " (interrupted)" } else { "" }
            );
        }
        out
    }
}
