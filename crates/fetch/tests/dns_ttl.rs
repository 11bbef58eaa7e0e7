//! A name's answer is kept for its records' TTL, asked of the job's name servers: here a DNS
//! responder on loopback whose answers another implementation encodes (hickory-proto), for
//! `localhost` (whose address the system resolver takes from /etc/hosts).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use hickory_proto::op::{Message, OpCode, ResponseCode};
use hickory_proto::rr::rdata::{A, CNAME};
use hickory_proto::rr::{Name, RData, Record, RecordType};
use nearcrawl_fetch::{FetchConfig, MIN_TTL, PolicyResolver};
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
async fn an_answer_is_kept_for_its_records_ttl() {
    let server = responder(Answers::Ttl(60)).await;
    let (addresses, ttl) = resolver(vec![server])
        .resolve_name("localhost")
        .await
        .unwrap();
    assert!(
        addresses.iter().all(|ip| ip.is_loopback()),
        "from the system resolver"
    );
    assert!(
        ttl <= Duration::from_secs(60) && ttl > Duration::from_secs(55),
        "the A record's TTL, not the alias's or the default: {ttl:?}"
    );
}

#[tokio::test]
async fn short_ttls_are_raised_and_unknown_names_kept_the_configured_time() {
    let short = responder(Answers::Ttl(1)).await;
    let (_, ttl) = resolver(vec![short])
        .resolve_name("localhost")
        .await
        .unwrap();
    assert!(
        ttl <= MIN_TTL && ttl > MIN_TTL - Duration::from_secs(1),
        "{ttl:?}"
    );
    let unknown = responder(Answers::Unknown).await;
    let nothing = "127.0.0.1:9".parse().unwrap(); // the discard port: no answer comes
    let (_, ttl) = resolver(vec![nothing, unknown])
        .resolve_name("localhost")
        .await
        .unwrap();
    assert!(ttl > Duration::from_secs(295), "dns_ttl_secs: {ttl:?}");
}
