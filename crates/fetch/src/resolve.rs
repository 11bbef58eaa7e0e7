//! A DNS resolver that refuses addresses the job's [`AddressPolicy`] does not allow, so a
//! public name pointing at 127.0.0.1 or 10.x cannot steer the crawler into a private network,
//! and keeps its answers, so that a name is resolved once per TTL and the crawl's politeness
//! per address ([`nearcrawl_frontier::AddressPoliteness`]) sees the addresses its
//! connections use.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nearcrawl_frontier::{AddressKey, AddressPolicy};

use crate::config::FetchConfig;
use crate::dns_ttl::TtlSource;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Resolves names once per TTL (the answers are kept, so that the crawl's politeness per
/// address and its connections see the same addresses), from the job's `[fetch.hosts]` first,
/// then with the system resolver; drops disallowed addresses. An answer is kept for its
/// records' TTL as the name servers give it ([`crate::dns_ttl`]), at least [`MIN_TTL`] and at
/// most `dns_ttl_secs`, which also serves when they cannot say.
#[derive(Debug, Clone)]
pub struct PolicyResolver {
    policy: Arc<AddressPolicy>,
    hosts: Arc<BTreeMap<String, IpAddr>>,
    ttl: Duration,
    ttls: Arc<TtlSource>,
    cache: Arc<Mutex<HashMap<String, Answer>>>,
    /// The names found on each server address (fixed ones and answers), for
    /// [`PolicyResolver::shares_address`].
    names_on: Arc<Mutex<HashMap<AddressKey, BTreeSet<String>>>>,
}

/// A name's addresses, and until when they are used.
type Answer = (Vec<IpAddr>, Instant);

/// How long past the system resolver's answer its TTL is waited for.
const TTL_WAIT: Duration = Duration::from_millis(300);

/// The shortest time an answer is kept, whatever its TTL: a name is not resolved again before
/// each request.
pub const MIN_TTL: Duration = Duration::from_secs(5);

impl PolicyResolver {
    /// A resolver applying `policy`, with no fixed names and answers kept five minutes.
    pub fn new(policy: AddressPolicy) -> PolicyResolver {
        PolicyResolver::with_hosts(policy, BTreeMap::new(), Duration::from_secs(300))
    }

    /// A resolver applying `policy`, answering the names of `hosts` with their address and
    /// keeping the system resolver's answers for `ttl` (no TTL asked of name servers).
    pub fn with_hosts(
        policy: AddressPolicy,
        hosts: BTreeMap<String, IpAddr>,
        ttl: Duration,
    ) -> PolicyResolver {
        PolicyResolver::with_ttls(policy, hosts, ttl, TtlSource::none())
    }

    /// The resolver of a job's configuration: `[fetch.hosts]`, answers kept for their
    /// records' TTL from `name_servers` (`/etc/resolv.conf`'s when empty), at most
    /// `dns_ttl_secs`.
    pub fn for_config(policy: AddressPolicy, config: &FetchConfig) -> PolicyResolver {
        PolicyResolver::with_ttls(
            policy,
            config.hosts.clone(),
            Duration::from_secs(config.dns_ttl_secs),
            TtlSource::new(&config.name_servers),
        )
    }

    fn with_ttls(
        policy: AddressPolicy,
        hosts: BTreeMap<String, IpAddr>,
        ttl: Duration,
        ttls: TtlSource,
    ) -> PolicyResolver {
        let mut names_on: HashMap<AddressKey, BTreeSet<String>> = HashMap::new();
        for (name, ip) in &hosts {
            names_on
                .entry(AddressKey::of(*ip))
                .or_default()
                .insert(name.clone());
        }
        PolicyResolver {
            policy: Arc::new(policy),
            hosts: Arc::new(hosts),
            ttl,
            ttls: Arc::new(ttls),
            cache: Arc::default(),
            names_on: Arc::new(Mutex::new(names_on)),
        }
    }

    /// Whether another name was found on the server address `name` resolved to first (shared
    /// hosting): its connections are then not kept open between requests, so that the
    /// connections open to the server stay within its budget of requests in flight.
    pub fn shares_address(&self, name: &str) -> bool {
        let first = match self.hosts.get(name) {
            Some(ip) => Some(*ip),
            None => self.cache.lock().ok().and_then(|cache| {
                cache
                    .get(name)
                    .and_then(|(found, _)| found.first().copied())
            }),
        };
        let Some(ip) = first else {
            return false;
        };
        self.names_on
            .lock()
            .is_ok_and(|names| names.get(&AddressKey::of(ip)).is_some_and(|n| n.len() > 1))
    }

    /// The addresses `name` resolves to that the policy allows, in the resolver's order;
    /// an error when it resolves to none (or only to refused ones).
    pub async fn addresses(&self, name: &str) -> std::io::Result<Vec<IpAddr>> {
        Ok(self.resolve_name(name).await?.0)
    }

    /// [`PolicyResolver::addresses`], and how much longer the answer is kept.
    pub async fn resolve_name(&self, name: &str) -> std::io::Result<(Vec<IpAddr>, Duration)> {
        let (found, valid_for) = match self.hosts.get(name) {
            Some(ip) => (vec![*ip], self.ttl),
            None => self.cached_lookup(name).await?,
        };
        let allowed: Vec<IpAddr> = found
            .iter()
            .copied()
            .filter(|ip| self.policy.allows_resolved(name, *ip))
            .collect();
        if allowed.is_empty() {
            let why = match found.is_empty() {
                true => format!("{name} resolves to no address"),
                false => format!("{name} resolves only to private or loopback addresses"),
            };
            return Err(std::io::Error::other(why));
        }
        Ok((allowed, valid_for))
    }

    /// The system resolver's answer for `name`, kept for its TTL, and how much longer it is.
    async fn cached_lookup(&self, name: &str) -> std::io::Result<(Vec<IpAddr>, Duration)> {
        let now = Instant::now();
        if let Ok(cache) = self.cache.lock()
            && let Some((found, until)) = cache.get(name)
            && *until > now
        {
            return Ok((found.clone(), *until - now));
        }
        // The TTL is asked beside the lookup, and waited for at most a moment after it.
        let asking = self.ttls.ttl(name);
        tokio::pin!(asking);
        let (found, ttl) = tokio::select! {
            found = lookup(name.to_string()) => {
                let late = tokio::time::timeout(TTL_WAIT, &mut asking).await;
                (found, late.ok().flatten())
            }
            ttl = &mut asking => (lookup(name.to_string()).await, ttl),
        };
        let found: Vec<IpAddr> = found?.into_iter().map(|a| a.ip()).collect();
        let keep = ttl.map_or(self.ttl, |ttl| ttl.clamp(MIN_TTL.min(self.ttl), self.ttl));
        if let Ok(mut cache) = self.cache.lock() {
            cache.retain(|_, (_, until)| *until > now);
            cache.insert(name.to_string(), (found.clone(), now + keep));
        }
        if let (Some(ip), Ok(mut names)) = (found.first(), self.names_on.lock()) {
            names
                .entry(AddressKey::of(*ip))
                .or_default()
                .insert(name.to_string());
        }
        Ok((found, keep))
    }
}

impl Resolve for PolicyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let resolver = self.clone();
        Box::pin(async move {
            let found = resolver.addresses(name.as_str()).await?;
            let addrs = found.into_iter().map(|ip| SocketAddr::new(ip, 0));
            Ok(Box::new(addrs) as Addrs)
        })
    }
}

/// The system resolver's answer for `host`, asked on a thread of its own rather than on
/// tokio's blocking pool (as `tokio::net::lookup_host` does): a crawl's blocking pool is
/// sized for its page analysis (`nearcrawl_engine::runtime`), and a slow name server must
/// not hold up pages, nor pages a name. One short-lived thread per new connection's lookup.
async fn lookup(host: String) -> std::io::Result<Vec<SocketAddr>> {
    let (answer, answered) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("nearcrawl-resolve".into())
        .spawn(move || {
            let found = std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), 0))
                .map(Iterator::collect);
            let _ = answer.send(found);
        })?;
    answered
        .await
        .map_err(|_| std::io::Error::other("the resolver thread ended without an answer"))?
}

#[cfg(test)]
mod tests {
    use super::*;
    use nearcrawl_frontier::CanonicalUrl;

    #[tokio::test]
    async fn private_answers_are_refused_unless_a_seed_is_there() {
        let name: Name = "localhost".parse().unwrap();
        let refused = PolicyResolver::new(AddressPolicy::default())
            .resolve(name)
            .await;
        let err = refused.err().expect("localhost resolves only to loopback");
        assert!(err.to_string().contains("private or loopback"), "{err}");
        let seed = CanonicalUrl::parse("http://localhost:8080/").unwrap();
        let allowed = PolicyResolver::new(AddressPolicy::new(false, &[&seed]));
        let name: Name = "localhost".parse().unwrap();
        let addrs: Vec<SocketAddr> = allowed.resolve(name).await.unwrap().collect();
        assert!(addrs.iter().all(|a| a.ip().is_loopback()) && !addrs.is_empty());
    }

    #[tokio::test]
    async fn fixed_names_answer_first_and_the_policy_still_applies() {
        let hosts: BTreeMap<String, IpAddr> = [
            ("shop.test".to_string(), "127.0.0.7".parse().unwrap()),
            ("blog.test".to_string(), "127.0.0.7".parse().unwrap()),
            ("www.test".to_string(), "192.0.2.1".parse().unwrap()),
        ]
        .into();
        let seed = CanonicalUrl::parse("http://shop.test/").unwrap();
        let policy = AddressPolicy::new(false, &[&seed]);
        let resolver = PolicyResolver::with_hosts(policy, hosts, Duration::from_secs(60));
        let shop = resolver.addresses("shop.test").await.unwrap();
        assert_eq!(shop, ["127.0.0.7".parse::<IpAddr>().unwrap()]);
        let blog = resolver.addresses("blog.test").await.unwrap_err();
        assert!(blog.to_string().contains("only to private"), "{blog}");
        let www = resolver.addresses("www.test").await.unwrap();
        assert_eq!(www, ["192.0.2.1".parse::<IpAddr>().unwrap()]);
    }

    #[test]
    fn names_sharing_an_address_are_told_apart_from_names_alone() {
        let hosts: BTreeMap<String, IpAddr> = [
            ("a.test".to_string(), "192.0.2.1".parse().unwrap()),
            ("b.test".to_string(), "192.0.2.1".parse().unwrap()),
            ("c.test".to_string(), "192.0.2.2".parse().unwrap()),
            ("d.test".to_string(), "2001:db8::1".parse().unwrap()),
            ("e.test".to_string(), "2001:db8::2".parse().unwrap()),
        ]
        .into();
        let resolver =
            PolicyResolver::with_hosts(AddressPolicy::default(), hosts, Duration::from_secs(60));
        let shared: Vec<bool> = ["a.test", "b.test", "c.test", "d.test", "unknown.test"]
            .iter()
            .map(|name| resolver.shares_address(name))
            .collect();
        assert_eq!(
            shared,
            [true, true, false, true, false],
            "one /64 is one address"
        );
    }

    #[tokio::test]
    async fn answers_are_kept_for_the_ttl() {
        let seed = CanonicalUrl::parse("http://localhost/").unwrap();
        let policy = AddressPolicy::new(false, &[&seed]);
        let resolver = PolicyResolver::with_hosts(policy, BTreeMap::new(), Duration::from_secs(60));
        let first = resolver.addresses("localhost").await.unwrap();
        let fake: IpAddr = "127.9.9.9".parse().unwrap();
        if let Ok(mut cache) = resolver.cache.lock()
            && let Some((found, _)) = cache.get_mut("localhost")
        {
            *found = vec![fake];
        }
        assert_eq!(
            resolver.addresses("localhost").await.unwrap(),
            [fake],
            "kept"
        );
        let expired = PolicyResolver {
            ttl: Duration::ZERO,
            ..resolver.clone()
        };
        expired.cache.lock().unwrap().clear();
        assert_eq!(
            expired.addresses("localhost").await.unwrap(),
            first,
            "asked again"
        );
    }
}
