//! The job's figures, stopping it, and the workers' reports, without joining it.

use crate::connection::Redis;
use crate::error::JobError;
use crate::keys::{JobName, Keys};

use super::answers::Status;

/// The figures of `job` on `redis`, without joining it.
pub fn job_status(redis: &mut Redis, job: &JobName) -> Result<Status, JobError> {
    status(redis, &Keys::new(job.clone()))
}

/// Stops `job` on `redis` without joining it.
pub fn stop_job(redis: &mut Redis, job: &JobName) -> Result<bool, JobError> {
    let key = Keys::new(job.clone()).job("job");
    redis.run("stop", |con| {
        let exists: bool = redis::cmd("EXISTS").arg(&key).query(con)?;
        if exists {
            redis::cmd("HSET")
                .arg(&key)
                .arg("state")
                .arg("stopped")
                .query::<()>(con)?;
        }
        Ok(exists)
    })
}

/// Keeps worker `worker`'s report of `job` (its `report.json`, as text) in the job, for
/// `nearcrawl job report` to merge; a later report of the same worker replaces it.
pub fn put_report(
    redis: &mut Redis,
    job: &JobName,
    worker: &str,
    report: &str,
) -> Result<(), JobError> {
    let key = Keys::new(job.clone()).job("reports");
    redis.run("put report", |con| {
        redis::cmd("HSET")
            .arg(&key)
            .arg(worker)
            .arg(report)
            .query::<()>(con)
    })
}

/// The reports the workers of `job` kept ([`put_report`]): (worker, report), by worker.
pub fn job_reports(redis: &mut Redis, job: &JobName) -> Result<Vec<(String, String)>, JobError> {
    let key = Keys::new(job.clone()).job("reports");
    let mut reports: Vec<(String, String)> =
        redis.run("reports", |con| redis::cmd("HGETALL").arg(&key).query(con))?;
    reports.sort();
    Ok(reports)
}

pub(super) fn status(redis: &mut Redis, keys: &Keys) -> Result<Status, JobError> {
    let job_key = keys.job("job");
    let job: Vec<(String, String)> = redis.run("status", |con| {
        redis::cmd("HGETALL").arg(&job_key).query(con)
    })?;
    let (ready, ending): (u64, u64) = redis.run("status", |con| {
        Ok((
            redis::cmd("ZCARD").arg(keys.job("ready")).query(con)?,
            redis::cmd("SCARD").arg(keys.job("ending")).query(con)?,
        ))
    })?;
    let hosts_with_work = ready + ending;
    let hosts: Vec<String> = redis.run("status", |con| {
        redis::cmd("SMEMBERS").arg(keys.job("hosts")).query(con)
    })?;
    let workers: Vec<(String, u64)> = redis.run("status", |con| {
        redis::cmd("HGETALL").arg(keys.job("workers")).query(con)
    })?;
    let field = |name: &str| job.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
    let mut status = Status {
        state: field("state").unwrap_or("missing").to_string(),
        seeded: field("seeded") == Some("done"),
        hosts: hosts.len() as u64,
        hosts_with_work,
        workers,
        ..Status::default()
    };
    for host in &hosts {
        let (queued, leased, seen, reclaimed, parked): (u64, u64, u64, Option<u64>, Option<u64>) =
            redis.run("status", |con| {
                Ok((
                    redis::cmd("ZCARD").arg(keys.host(host, "q")).query(con)?,
                    redis::cmd("ZCARD").arg(keys.host(host, "l")).query(con)?,
                    redis::cmd("SCARD")
                        .arg(keys.host(host, "seen"))
                        .query(con)?,
                    redis::cmd("HGET")
                        .arg(keys.host(host, "p"))
                        .arg("reclaimed")
                        .query(con)?,
                    redis::cmd("HGET")
                        .arg(keys.host(host, "p"))
                        .arg("parked")
                        .query(con)?,
                ))
            })?;
        status.queued += queued;
        status.leased += leased;
        status.seen += seen;
        status.reclaimed += reclaimed.unwrap_or(0);
        status.parked += parked.unwrap_or(0);
    }
    status.workers.sort();
    Ok(status)
}
