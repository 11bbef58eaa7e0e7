//! [`Addresses`]: which server address each host name is on, and each address's politeness
//! budget ([`AddressPoliteness`]), shared by all its names. A name is resolved (a
//! [`super::Step::Resolve`]) before its first request and again once its answer is older than
//! the TTL and nothing of it is in flight; a literal address needs no resolving. A name that
//! does not resolve, or a job without limits per address, is polite per name only.

use std::collections::{BTreeSet, HashMap};
use std::hash::Hash;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use nearcrawl_frontier::{AddressKey, AddressPoliteness, HostOutcome, PolitenessConfig};
use nearcrawl_records::AddressSummary;
use nearcrawl_store::HostId;
use url::{Host, Url};

/// What a host still needs, address-wise, before a request may start.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Gate {
    /// Its name must be resolved first (a step to hand out).
    Resolve(String),
    /// Its name is being resolved: nothing starts until the answer.
    Resolving,
    /// Its address lets a request start at this instant (`None`: at its connection limit, so
    /// when a request to it ends).
    At(Option<Instant>),
    /// No address limits it.
    Free,
}

/// A name's resolution.
#[derive(Debug, Clone, Copy)]
enum Resolution {
    Resolving,
    /// Resolved (`None`: to no usable address), until this instant (`None`: forever, a
    /// literal address).
    Known {
        ip: Option<IpAddr>,
        until: Option<Instant>,
    },
}

/// What a host's name needs before its next request.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Need {
    /// To be resolved (the name).
    Resolve(String),
    /// Being resolved.
    Resolving,
    /// Resolved: its requests go to this address (`None`: none known).
    Known(Option<IpAddr>),
}

/// Which address each host name is on: resolved before its first request and again once the
/// answer is older than its TTL and nothing of the host is in flight; a literal address needs
/// no resolving. Keyed by the caller's name for a host (`K`).
#[derive(Debug)]
pub(crate) struct Resolutions<K> {
    hosts: HashMap<K, Resolution>,
}

impl<K> Default for Resolutions<K> {
    fn default() -> Self {
        Resolutions {
            hosts: HashMap::new(),
        }
    }
}

impl<K: Hash + Eq + Clone> Resolutions<K> {
    /// What host `id` (on `origin`, `active` requests in flight) needs at `now`.
    pub(crate) fn need(&mut self, id: &K, origin: Option<&Url>, active: u32, now: Instant) -> Need {
        match self.hosts.get(id) {
            Some(Resolution::Resolving) => return Need::Resolving,
            Some(Resolution::Known { ip, until }) => {
                let expired = until.is_some_and(|until| until <= now) && active == 0;
                if !expired {
                    return Need::Known(*ip);
                }
            }
            None => {}
        }
        let Some(origin) = origin else {
            return Need::Known(None);
        };
        let literal = match origin.host() {
            Some(Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
            Some(Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
            Some(Host::Domain(name)) => return Need::Resolve(name.to_string()),
            None => None,
        };
        let until = None;
        self.hosts
            .insert(id.clone(), Resolution::Known { ip: literal, until });
        Need::Known(literal)
    }

    /// Host `id`'s name is being resolved (its [`Need::Resolve`] handed out).
    pub(crate) fn resolving(&mut self, id: K) {
        self.hosts.insert(id, Resolution::Resolving);
    }

    /// Host `id`'s name resolved at `now` to `ip` first (`None`: to nothing usable); the
    /// answer holds for `ttl`.
    pub(crate) fn resolved(&mut self, id: K, ip: Option<IpAddr>, now: Instant, ttl: Duration) {
        let until = now.checked_add(ttl);
        self.hosts.insert(id, Resolution::Known { ip, until });
    }

    /// The hosts resolved to an address, with it.
    pub(crate) fn known(&self) -> impl Iterator<Item = (&K, IpAddr)> {
        self.hosts
            .iter()
            .filter_map(|(id, resolution)| match resolution {
                Resolution::Known { ip: Some(ip), .. } => Some((id, *ip)),
                _ => None,
            })
    }

    /// The address host `id`'s requests go to, when known.
    pub(crate) fn ip(&self, id: &K) -> Option<IpAddr> {
        match self.hosts.get(id) {
            Some(Resolution::Known { ip, .. }) => *ip,
            _ => None,
        }
    }
}

/// One server address: its budget and the names on it.
#[derive(Debug)]
struct Server {
    politeness: AddressPoliteness,
    names: BTreeSet<HostId>,
}

/// The addresses of a job's hosts and their budgets, in one process.
#[derive(Debug, Default)]
pub(crate) struct Addresses {
    resolutions: Resolutions<HostId>,
    servers: HashMap<AddressKey, Server>,
}

impl Addresses {
    /// What host `id` (on `origin`, `active` requests in flight) needs before a request may
    /// start at `now`.
    pub(crate) fn gate(
        &mut self,
        id: HostId,
        origin: Option<&Url>,
        active: u32,
        now: Instant,
        config: &PolitenessConfig,
    ) -> Gate {
        if !config.limits_addresses() {
            return Gate::Free;
        }
        match self.resolutions.need(&id, origin, active, now) {
            Need::Resolve(name) => Gate::Resolve(name),
            Need::Resolving => Gate::Resolving,
            Need::Known(None) => Gate::Free,
            Need::Known(Some(ip)) => {
                let key = AddressKey::of(ip);
                // Asked at every look at the host: the name is on its server already but the
                // first time (a literal address, found here).
                let server = match self.servers.get(&key) {
                    Some(server) if server.names.contains(&id) => server,
                    _ => self.server_of(id, key, now),
                };
                Gate::At(server.politeness.ready_at(config))
            }
        }
    }

    /// The server at `key`, with host `id` on it.
    fn server_of(&mut self, id: HostId, key: AddressKey, now: Instant) -> &mut Server {
        let server = self.servers.entry(key).or_insert_with(|| Server {
            politeness: AddressPoliteness::new(now),
            names: BTreeSet::new(),
        });
        server.names.insert(id);
        server
    }

    /// Host `id`'s name is being resolved (its [`Gate::Resolve`] handed out).
    pub(crate) fn resolving(&mut self, id: HostId) {
        self.resolutions.resolving(id);
    }

    /// Host `id`'s name resolved at `now` to `ip` first (`None`: to nothing usable); the
    /// answer holds for `ttl`. A host that moved leaves its old address's names.
    pub(crate) fn resolved(&mut self, id: HostId, ip: Option<IpAddr>, now: Instant, ttl: Duration) {
        let old = self.resolutions.ip(&id).map(AddressKey::of);
        self.resolutions.resolved(id, ip, now, ttl);
        let new = ip.map(AddressKey::of);
        if let Some(old) = old
            && Some(old) != new
            && let Some(server) = self.servers.get_mut(&old)
        {
            server.names.remove(&id);
        }
        if let Some(new) = new {
            self.server_of(id, new, now);
        }
    }

    fn server(&mut self, id: HostId) -> Option<&mut Server> {
        let key = AddressKey::of(self.resolutions.ip(&id)?);
        self.servers.get_mut(&key)
    }

    /// A request of host `id` starts at `now`.
    pub(crate) fn start(&mut self, id: HostId, now: Instant, config: &PolitenessConfig) {
        if let Some(server) = self.server(id) {
            server.politeness.start(now, config);
        }
    }

    /// A request of host `id` ended at `now`.
    pub(crate) fn finish(
        &mut self,
        id: HostId,
        now: Instant,
        outcome: HostOutcome,
        config: &PolitenessConfig,
    ) {
        if let Some(server) = self.server(id) {
            server
                .politeness
                .finish(now, u64::from(id), outcome, config);
        }
    }

    /// The address host `id`'s requests go to, when known.
    pub(crate) fn ip(&self, id: HostId) -> Option<IpAddr> {
        self.resolutions.ip(&id)
    }

    /// Every address met, with its names and back-offs, in address order.
    pub(crate) fn summary(&self) -> Vec<AddressSummary> {
        let mut rows: Vec<(AddressKey, AddressSummary)> = self
            .servers
            .iter()
            .map(|(key, server)| {
                let row = AddressSummary {
                    address: key.to_string(),
                    names: server.names.len(),
                    backoffs: server.politeness.backoffs(),
                };
                (*key, row)
            })
            .collect();
        rows.sort_by_key(|(key, _)| *key);
        rows.into_iter().map(|(_, row)| row).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> PolitenessConfig {
        PolitenessConfig {
            max_connections_per_address: Some(1),
            per_address_delay_ms: Some(100),
            ..PolitenessConfig::default()
        }
    }

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn names_are_resolved_once_per_ttl_and_share_their_address() {
        let (config, t0) = (config(), Instant::now());
        let mut addresses = Addresses::default();
        let (a, b) = (url("http://a.test/"), url("http://b.test:8080/"));
        assert_eq!(
            addresses.gate(1, Some(&a), 0, t0, &config),
            Gate::Resolve("a.test".into())
        );
        addresses.resolving(1);
        assert_eq!(addresses.gate(1, Some(&a), 0, t0, &config), Gate::Resolving);
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        addresses.resolved(1, Some(ip), t0, ms(1_000));
        assert_eq!(
            addresses.gate(2, Some(&b), 0, t0, &config),
            Gate::Resolve("b.test".into())
        );
        addresses.resolved(2, Some(ip), t0, ms(1_000));
        assert_eq!(
            addresses.gate(1, Some(&a), 0, t0, &config),
            Gate::At(Some(t0))
        );
        addresses.start(1, t0, &config);
        assert_eq!(
            addresses.gate(2, Some(&b), 0, t0, &config),
            Gate::At(None),
            "one connection to the address, whichever name"
        );
        addresses.finish(1, t0 + ms(50), HostOutcome::Answered, &config);
        assert_eq!(
            addresses.gate(2, Some(&b), 0, t0, &config),
            Gate::At(Some(t0 + ms(150)))
        );
        assert_eq!(addresses.summary()[0].names, 2);
        // The TTL: asked again once nothing of the name is in flight.
        let later = t0 + ms(1_000);
        assert_eq!(
            addresses.gate(1, Some(&a), 1, later, &config),
            Gate::At(Some(t0 + ms(150)))
        );
        assert_eq!(
            addresses.gate(1, Some(&a), 0, later, &config),
            Gate::Resolve("a.test".into())
        );
        addresses.resolved(1, Some("192.0.2.2".parse().unwrap()), later, ms(1_000));
        let names: Vec<usize> = addresses.summary().iter().map(|s| s.names).collect();
        assert_eq!(names, [1, 1], "moved to its new address");
    }

    #[test]
    fn literal_addresses_unresolved_names_and_no_limits() {
        let (config, t0) = (config(), Instant::now());
        let mut addresses = Addresses::default();
        let literal = url("http://127.0.0.1:9000/");
        assert_eq!(
            addresses.gate(1, Some(&literal), 0, t0, &config),
            Gate::At(Some(t0))
        );
        assert_eq!(addresses.ip(1), Some("127.0.0.1".parse().unwrap()));
        let v6 = url("http://[2001:db8::1]/");
        assert_eq!(
            addresses.gate(2, Some(&v6), 0, t0, &config),
            Gate::At(Some(t0))
        );
        assert_eq!(addresses.summary()[1].address, "2001:db8::/64");
        let name = url("http://nowhere.test/");
        assert!(matches!(
            addresses.gate(3, Some(&name), 0, t0, &config),
            Gate::Resolve(_)
        ));
        addresses.resolved(3, None, t0, ms(1_000));
        assert_eq!(addresses.gate(3, Some(&name), 0, t0, &config), Gate::Free);
        let none = PolitenessConfig {
            max_connections_per_address: Some(0),
            per_address_delay_ms: Some(0),
            ..PolitenessConfig::default()
        };
        let mut free = Addresses::default();
        assert_eq!(free.gate(1, Some(&literal), 0, t0, &none), Gate::Free);
        assert_eq!(free.gate(2, Some(&name), 0, t0, &none), Gate::Free);
    }
}
