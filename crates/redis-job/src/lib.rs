//! A crawl job shared by several workers through Redis (or Valkey, or a Redis Cluster).
//!
//! Each worker runs the ordinary crawl with two parts swapped for shared ones:
//!
//! - [`SharedFrontier`]: the per-host queues, the seen set, per-host politeness (connections,
//!   delay, Crawl-delay, back-off) and per-address politeness (the names on one server) across
//!   all workers, robots.txt read once per host for the
//!   job, and leases with deadlines, so a dead worker's URLs are fetched by another and none
//!   is lost; per-host page budgets; hosts handed out by how long they waited or, for a
//!   focused crawl, by the priority of their next URL; and duplicates' links parked until
//!   the page they depend on is decided ([`frontier`]);
//! - [`RedisIndex`]: the near-duplicate index (simhash blocks, sentence postings, exact
//!   keys, the texts verification needs), whose check-and-insert makes exactly one of two
//!   near-duplicates judged at the same moment the original ([`index`]);
//! - [`RuleLog`] and [`Declarations`]: the link policy's URL rules, as a log every worker
//!   replays in one order, and what each fetched page declared for the probes of its
//!   counterparts ([`learned`]).
//!
//! Every step is one Lua script (or one `MGET`) over keys of one hash slot, and every time
//! comes from the server's clock (`TIME`), never a worker's. [`Redis`] reconnects and
//! repeats a step while the server cannot be had (a lost connection, a restart from the
//! append-only file), counting each fault; every step is safe to repeat.
//!
//! ```no_run
//! use std::sync::Arc;
//! use nearcrawl_redis_job::{JobName, Next, Patience, Redis, RedisTarget, Role, Settings, SharedFrontier};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let redis = Redis::connect(RedisTarget::parse("redis://127.0.0.1:6379/")?, Patience::default(), Arc::default())?;
//! let (mut frontier, role, _) = SharedFrontier::join(redis, JobName::new("docs")?, "worker-1", Settings::default())?;
//! if role == Role::Seed { /* offer the seeds */ frontier.seeded()?; }
//! loop {
//!     match frontier.next_step()? {
//!         Next::Fetch(lease) => { /* fetch, decide, offer its links */ }
//!         Next::Wait(wait) => std::thread::sleep(wait),
//!         Next::Done | Next::Stopped => break,
//!         _ => {}
//!     }
//! }
//! # Ok(()) }
//! ```

mod connection;
mod error;
pub mod frontier;
pub mod index;
mod keys;
pub mod learned;
#[cfg(any(test, feature = "local-server"))]
pub mod server;

pub use crate::connection::{CLUSTER_SCHEME, Faults, Patience, Redis, RedisTarget};
pub use crate::error::JobError;
pub use crate::frontier::{
    AddressHold, AddressOf, Done, Finished, JOB_END_PRIORITY, Lease, Next, Offer, Outcome, Parking,
    Role, Settings, SharedFrontier, Status, job_reports, job_status, key_hex, put_report, stop_job,
};
pub use crate::index::{Admission, Admitted, PageKeys, RedisIndex, Snapshot, StoredPage};
pub use crate::keys::{JobName, JobNameError};
pub use crate::learned::{Declarations, RuleLog};
