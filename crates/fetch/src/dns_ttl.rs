//! How long a name's answer may be kept: the smallest TTL of its address records as the
//! job's name servers give it. The system resolver (which honours `/etc/hosts` and
//! `nsswitch.conf`) says nothing of TTLs, so beside its lookup the name's `A` records (then
//! `AAAA`, when it has none) are asked of the name servers directly, over UDP, by
//! `hickory-resolver` (a maintained client in place of the one of our own it replaced): those
//! of `[fetch] name_servers`, or `/etc/resolv.conf`'s. With the system's name servers, a name of
//! `/etc/hosts` is not asked (its answer is the file's, not theirs), nor ever `localhost`
//! (RFC 6761). A name they do not know,
//! or name servers that do not answer in time, give no TTL: the caller then keeps the answer
//! its configured time.

use std::collections::HashSet;
use std::net::{IpAddr, SocketAddr};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use hickory_resolver::TokioResolver;
use hickory_resolver::config::{
    ConnectionConfig, LookupIpStrategy, NameServerConfig, ResolveHosts, ResolverConfig,
    ResolverOpts,
};
use hickory_resolver::net::runtime::TokioRuntimeProvider;

/// Where TTLs are asked.
#[derive(Clone)]
pub(crate) struct TtlSource {
    servers: Vec<SocketAddr>,
    timeout: Duration,
    /// Names whose answer is not the name servers' to give (`/etc/hosts`).
    not_theirs: HashSet<String>,
    /// The resolver asking `servers`, made on the first question (it needs the runtime);
    /// `None` when it could not be made.
    resolver: std::sync::Arc<OnceLock<Option<TokioResolver>>>,
}

impl std::fmt::Debug for TtlSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TtlSource")
            .field("servers", &self.servers)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
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
            resolver: Default::default(),
        }
    }

    /// A source that never asks (TTLs are then the caller's own).
    pub(crate) fn none() -> TtlSource {
        TtlSource {
            servers: Vec::new(),
            timeout: Duration::ZERO,
            not_theirs: HashSet::new(),
            resolver: Default::default(),
        }
    }

    /// The TTL of `name`'s address records (its `A` records, else its `AAAA`, and the aliases
    /// on the way), as left in the answer of the first name server that gives one; `None`
    /// when none does.
    pub(crate) async fn ttl(&self, name: &str) -> Option<Duration> {
        let lower = name.trim_end_matches('.').to_ascii_lowercase();
        // `localhost` and its subdomains are never asked of name servers (RFC 6761).
        let local = lower == "localhost" || lower.ends_with(".localhost");
        if self.servers.is_empty() || local || self.not_theirs.contains(&lower) {
            return None;
        }
        let resolver = self.resolver.get_or_init(|| self.resolver_of()).as_ref()?;
        // Fully qualified: asked as it is, not under the search domains.
        let fqdn = format!("{}.", name.trim_end_matches('.'));
        let asked = tokio::time::timeout(
            self.timeout * (self.servers.len() as u32 + 1),
            resolver.lookup_ip(fqdn),
        );
        let answer = asked.await.ok()?.ok()?;
        answer.iter().next()?;
        Some(
            answer
                .valid_until()
                .saturating_duration_since(Instant::now()),
        )
    }

    /// A resolver asking `servers` in turn over UDP, nothing else: no hosts file (a name of
    /// it is never asked), no cache past the answer's TTL, one try each.
    fn resolver_of(&self) -> Option<TokioResolver> {
        let servers = self.servers.iter().map(|server| {
            let mut udp = ConnectionConfig::udp();
            udp.port = server.port();
            NameServerConfig::new(server.ip(), true, vec![udp])
        });
        let config = ResolverConfig::from_parts(None, Vec::new(), servers.collect());
        let mut options = ResolverOpts::default();
        options.timeout = self.timeout;
        options.attempts = 1;
        options.use_hosts_file = ResolveHosts::Never;
        options.ip_strategy = LookupIpStrategy::Ipv4thenIpv6;
        options.cache_size = 0;
        let builder = TokioResolver::builder_with_config(config, TokioRuntimeProvider::default());
        builder.with_options(options).build().ok()
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

    /// A DNS responder on loopback whose answers another implementation encodes
    /// (hickory-proto): an `A` record of `ttl` behind a `CNAME` of twice it, no `AAAA`; or
    /// NXDOMAIN (`None`).
    async fn responder(ttl: Option<u32>) -> SocketAddr {
        use hickory_proto::op::{Message, OpCode, ResponseCode};
        use hickory_proto::rr::rdata::{A, CNAME};
        use hickory_proto::rr::{Name, RData, Record, RecordType};
        let socket = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let addr = socket.local_addr().unwrap();
        tokio::spawn(async move {
            let mut buf = [0u8; 512];
            while let Ok((n, from)) = socket.recv_from(&mut buf).await {
                let query = Message::from_vec(&buf[..n]).unwrap();
                let mut answer = Message::response(query.metadata.id, OpCode::Query);
                answer.metadata.recursion_available = true;
                for q in &query.queries {
                    answer.add_query(q.clone());
                    match ttl {
                        Some(ttl) if q.query_type() == RecordType::A => {
                            let alias = Name::from_ascii("alias.test.").unwrap();
                            let cname = RData::CNAME(CNAME(alias.clone()));
                            answer.add_answer(Record::from_rdata(q.name().clone(), 2 * ttl, cname));
                            let a = RData::A(A(std::net::Ipv4Addr::LOCALHOST));
                            answer.add_answer(Record::from_rdata(alias, ttl, a));
                        }
                        Some(_) => {}
                        None => answer.metadata.response_code = ResponseCode::NXDomain,
                    }
                }
                let _ = socket.send_to(&answer.to_vec().unwrap(), from).await;
            }
        });
        addr
    }

    #[tokio::test]
    async fn a_name_s_ttl_is_its_address_records_as_the_name_servers_give_it() {
        let server = responder(Some(60)).await;
        let ttl = TtlSource::new(&[server])
            .ttl("www.example.test")
            .await
            .unwrap();
        assert!(
            ttl <= Duration::from_secs(60) && ttl > Duration::from_secs(55),
            "the A record's TTL, not the alias's: {ttl:?}"
        );
        // A name they do not know, or servers that do not answer: no TTL.
        let unknown = responder(None).await;
        let nothing: SocketAddr = "127.0.0.1:9".parse().unwrap(); // the discard port
        let source = TtlSource::new(&[nothing, unknown]);
        assert_eq!(source.ttl("www.example.test").await, None);
        // `localhost` is never asked.
        assert_eq!(TtlSource::new(&[server]).ttl("localhost").await, None);
        assert_eq!(TtlSource::none().ttl("www.example.test").await, None);
    }
}
