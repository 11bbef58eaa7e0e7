//! A DNS resolver that refuses addresses the job's [`AddressPolicy`] does not allow, so a
//! public name pointing at 127.0.0.1 or 10.x cannot steer the crawler into a private network.

use std::net::SocketAddr;
use std::sync::Arc;

use nearcrawl_frontier::AddressPolicy;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Resolves with the system resolver, then drops disallowed addresses.
#[derive(Debug, Clone)]
pub struct PolicyResolver {
    policy: Arc<AddressPolicy>,
}

impl PolicyResolver {
    /// A resolver applying `policy`.
    pub fn new(policy: AddressPolicy) -> PolicyResolver {
        PolicyResolver {
            policy: Arc::new(policy),
        }
    }
}

impl Resolve for PolicyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = Arc::clone(&self.policy);
        Box::pin(async move {
            let host = name.as_str().to_string();
            let found = lookup(host.clone()).await?;
            let allowed: Vec<SocketAddr> = found
                .iter()
                .copied()
                .filter(|a| policy.allows_resolved(&host, a.ip()))
                .collect();
            if allowed.is_empty() && !found.is_empty() {
                return Err(
                    format!("{host} resolves only to private or loopback addresses").into(),
                );
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
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
}
