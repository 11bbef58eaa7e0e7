//! How long a name's answer may be kept: the smallest TTL of its address records as the
//! job's name servers give it. The system resolver (which honours `/etc/hosts` and
//! `nsswitch.conf`) says nothing of TTLs, so beside its lookup the name's `A` records (then
//! `AAAA`, when it has none) are asked of the name servers directly, over UDP: those of
//! `[fetch] name_servers`, or `/etc/resolv.conf`'s. With the system's name servers, a name of
//! `/etc/hosts` is not asked (its answer is the file's, not theirs). A name they do not know,
//! or name servers that do not answer in time, give no TTL: the caller then keeps the answer
//! its configured time.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

/// `A` and `AAAA` record types.
const A: u16 = 1;
const AAAA: u16 = 28;
/// `CNAME`: an alias on the way to the addresses, whose TTL bounds theirs.
const CNAME: u16 = 5;

/// Where TTLs are asked.
#[derive(Debug, Clone)]
pub(crate) struct TtlSource {
    servers: Vec<SocketAddr>,
    timeout: Duration,
    /// Names whose answer is not the name servers' to give (`/etc/hosts`).
    not_theirs: HashSet<String>,
}

impl TtlSource {
    /// The name servers `servers`, or `/etc/resolv.conf`'s when none are given.
    pub(crate) fn new(servers: &[SocketAddr]) -> TtlSource {
        let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
        let (servers, not_theirs) = match servers {
            [] => (
                resolv_conf_servers(&read("/etc/resolv.conf")),
                hosts_file_names(&read("/etc/hosts")),
            ),
            given => (given.to_vec(), HashSet::new()),
        };
        TtlSource {
            servers,
            timeout: Duration::from_secs(1),
            not_theirs,
        }
    }

    /// A source that never asks (TTLs are then the caller's own).
    pub(crate) fn none() -> TtlSource {
        TtlSource {
            servers: Vec::new(),
            timeout: Duration::ZERO,
            not_theirs: HashSet::new(),
        }
    }

    /// The TTL of `name`'s address records, from the first name server that answers with
    /// them; `None` when none does.
    pub(crate) async fn ttl(&self, name: &str) -> Option<Duration> {
        if self.not_theirs.contains(&name.to_ascii_lowercase()) {
            return None;
        }
        for server in &self.servers {
            for qtype in [A, AAAA] {
                match tokio::time::timeout(self.timeout, ask(*server, name, qtype)).await {
                    Ok(Some(Answer::Ttl(ttl))) => return Some(Duration::from_secs(ttl.into())),
                    // The name has no records of this type: try the other.
                    Ok(Some(Answer::NoRecords)) => continue,
                    // The server does not know the name, or did not answer: the next one.
                    Ok(Some(Answer::Unknown) | None) | Err(_) => break,
                }
            }
        }
        None
    }
}

/// `nameserver` lines of a resolv.conf.
fn resolv_conf_servers(text: &str) -> Vec<SocketAddr> {
    text.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("nameserver")).then_some(())?;
            let ip: IpAddr = words.next()?.split('%').next()?.parse().ok()?;
            Some(SocketAddr::new(ip, 53))
        })
        .collect()
}

/// The names of a hosts file (every word after each line's address).
fn hosts_file_names(text: &str) -> HashSet<String> {
    text.lines()
        .map(|line| line.split('#').next().unwrap_or_default())
        .flat_map(|line| line.split_whitespace().skip(1))
        .map(str::to_ascii_lowercase)
        .collect()
}

/// What a name server said.
#[derive(Debug, PartialEq, Eq)]
enum Answer {
    /// The smallest TTL (seconds) of the records answering.
    Ttl(u32),
    /// The name exists, with no records of that type.
    NoRecords,
    /// An error (the name does not exist, the server refused).
    Unknown,
}

async fn ask(server: SocketAddr, name: &str, qtype: u16) -> Option<Answer> {
    let local: SocketAddr = match server {
        SocketAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
        SocketAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
    };
    let socket = tokio::net::UdpSocket::bind(local).await.ok()?;
    socket.connect(server).await.ok()?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let id = (nanos as u16) ^ ((nanos >> 16) as u16) ^ qtype;
    socket.send(&query(id, name, qtype)?).await.ok()?;
    let mut buf = vec![0u8; 4096];
    let n = socket.recv(&mut buf).await.ok()?;
    read_answer(&buf[..n], id, qtype)
}

/// A query for `name`'s records of type `qtype`, recursion desired; `None` for a name that
/// cannot be spelt in DNS (a label over 63 bytes).
fn query(id: u16, name: &str, qtype: u16) -> Option<Vec<u8>> {
    let mut q = Vec::with_capacity(18 + name.len());
    q.extend_from_slice(&id.to_be_bytes());
    q.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
    for label in name.trim_end_matches('.').split('.') {
        if label.is_empty() || label.len() > 63 {
            return None;
        }
        q.push(label.len() as u8);
        q.extend_from_slice(label.as_bytes());
    }
    q.push(0);
    q.extend_from_slice(&qtype.to_be_bytes());
    q.extend_from_slice(&1u16.to_be_bytes());
    Some(q)
}

/// The answer to query `id`: the smallest TTL of its records of type `qtype` and the
/// aliases leading to them; `None` when the bytes are not that answer.
fn read_answer(msg: &[u8], id: u16, qtype: u16) -> Option<Answer> {
    let u16_at = |at: usize| Some(u16::from_be_bytes([*msg.get(at)?, *msg.get(at + 1)?]));
    if u16_at(0)? != id || msg.get(2)? & 0x80 == 0 {
        return None;
    }
    if msg.get(3)? & 0x0f != 0 {
        return Some(Answer::Unknown);
    }
    let (questions, answers) = (u16_at(4)?, u16_at(6)?);
    let mut at = 12;
    for _ in 0..questions {
        at = skip_name(msg, at)? + 4;
    }
    let mut ttl: Option<u32> = None;
    let mut found = false;
    for _ in 0..answers {
        at = skip_name(msg, at)?;
        let rtype = u16_at(at)?;
        let record_ttl = u32::from_be_bytes(msg.get(at + 4..at + 8)?.try_into().ok()?);
        let length = usize::from(u16_at(at + 8)?);
        at += 10 + length;
        if at > msg.len() {
            return None;
        }
        if rtype == qtype || rtype == CNAME {
            ttl = Some(ttl.map_or(record_ttl, |t| t.min(record_ttl)));
            found |= rtype == qtype;
        }
    }
    Some(match (found, ttl) {
        (true, Some(ttl)) => Answer::Ttl(ttl),
        _ => Answer::NoRecords,
    })
}

/// Where the name at `at` ends (labels, or a compression pointer).
fn skip_name(msg: &[u8], mut at: usize) -> Option<usize> {
    loop {
        let len = *msg.get(at)?;
        match len {
            0 => return Some(at + 1),
            l if l & 0xc0 == 0xc0 => return Some(at + 2),
            l => at += 1 + usize::from(l),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_servers_are_read_from_resolv_conf() {
        let text = "# comment\nsearch example.org\nnameserver 192.0.2.53\nnameserver fe80::1%eth0\n\
                    nameserver nonsense\noptions ndots:2\n";
        let servers: Vec<String> = resolv_conf_servers(text)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(servers, ["192.0.2.53:53", "[fe80::1]:53"]);
    }

    #[test]
    fn hosts_file_names_are_not_the_name_servers_to_give() {
        let names = hosts_file_names("127.0.0.1 localhost\n::1 ip6-localhost ip6-loopback # x\n");
        let mut names: Vec<String> = names.into_iter().collect();
        names.sort();
        assert_eq!(names, ["ip6-localhost", "ip6-loopback", "localhost"]);
    }

    #[test]
    fn names_that_dns_cannot_spell_are_not_asked() {
        assert!(query(1, &"x".repeat(64), A).is_none());
        assert!(query(1, "a..b", A).is_none());
        let q = query(0x1234, "www.example.org.", A).unwrap();
        assert_eq!(&q[..2], &[0x12, 0x34]);
        assert_eq!(&q[12..16], b"\x03www");
    }

    #[test]
    fn answers_that_are_not_the_answer_are_refused() {
        let q = query(7, "a.test", A).unwrap();
        assert_eq!(read_answer(&q, 7, A), None, "a query, not a response");
        let mut response = q.clone();
        response[2] |= 0x80;
        assert_eq!(read_answer(&response, 8, A), None, "another id");
        assert_eq!(read_answer(&response, 7, A), Some(Answer::NoRecords));
        assert_eq!(read_answer(&response[..5], 7, A), None, "cut short");
        assert_eq!(
            read_answer(&response[..14], 7, A),
            None,
            "cut in its question"
        );
        response[3] |= 3; // NXDOMAIN
        assert_eq!(read_answer(&response, 7, A), Some(Answer::Unknown));
    }
}
