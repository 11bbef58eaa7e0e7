//! A name's answer is kept for its records' TTL, asked of the job's name servers (their
//! answers are tested in src/dns_ttl.rs, on names the system resolver cannot look up here);
//! `localhost`, whose address the system resolver takes from /etc/hosts, is never asked of
//! them (RFC 6761): here a DNS responder on loopback, whose answers another implementation
//! encodes (hickory-proto), would say otherwise.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use hickory_proto::op::{Message, OpCode, ResponseCode};
use hickory_proto::rr::rdata::{A, CNAME};
use hickory_proto::rr::{Name, RData, Record, RecordType};
use nearcrawl_fetch::{FetchConfig, PolicyResolver};
use nearcrawl_frontier::{AddressPolicy, CanonicalUrl};

/// How the responder answers.
#[derive(Clone, Copy)]
enum Answers {
    /// An `A` record of this TTL behind a `CNAME` of twice it; no `AAAA`.
    Ttl(u32),
    /// NXDOMAIN.
    Unknown,
}

async fn responder(answers: Answers) -> SocketAddr {
    let socket = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = socket.local_addr().unwrap();
    tokio::spawn(async move {
        let mut buf = [0u8; 512];
        loop {
            let Ok((n, from)) = socket.recv_from(&mut buf).await else {
                return;
            };
            let query = Message::from_vec(&buf[..n]).unwrap();
            let mut answer = Message::response(query.metadata.id, OpCode::Query);
            answer.metadata.recursion_available = true;
            for q in &query.queries {
                answer.add_query(q.clone());
                match answers {
                    Answers::Ttl(ttl) if q.query_type() == RecordType::A => {
                        let alias = Name::from_ascii("alias.test.").unwrap();
                        let cname = RData::CNAME(CNAME(alias.clone()));
                        answer.add_answer(Record::from_rdata(q.name().clone(), 2 * ttl, cname));
                        let a = RData::A(A(Ipv4Addr::LOCALHOST));
                        answer.add_answer(Record::from_rdata(alias, ttl, a));
                    }
                    Answers::Ttl(_) => {}
                    Answers::Unknown => answer.metadata.response_code = ResponseCode::NXDomain,
                }
            }
            let _ = socket.send_to(&answer.to_vec().unwrap(), from).await;
        }
    });
    addr
}

fn resolver(name_servers: Vec<SocketAddr>) -> PolicyResolver {
    let seed = CanonicalUrl::parse("http://localhost/").unwrap();
    let config = FetchConfig {
        name_servers,
        dns_ttl_secs: 300,
        ..FetchConfig::default()
    };
    PolicyResolver::for_config(AddressPolicy::new(false, &[&seed]), &config)
}

#[tokio::test]
async fn localhost_is_kept_the_configured_time_whatever_the_name_servers_say() {
    for answers in [Answers::Ttl(60), Answers::Ttl(1), Answers::Unknown] {
        let server = responder(answers).await;
        let (addresses, ttl) = resolver(vec![server])
            .resolve_name("localhost")
            .await
            .unwrap();
        assert!(
            addresses.iter().all(|ip| ip.is_loopback()),
            "from the system resolver"
        );
        assert!(ttl > Duration::from_secs(295), "dns_ttl_secs: {ttl:?}");
    }
}
