//! The fake allocator behind mutual TLS with certificates made here:
//! allocation works with the client certificate and fails without it, with
//! an untrusted one, or when the allocator's certificate is not from the
//! CA the matcher was given.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use netcode_matcher::{AllocateError, Allocated, FleetSource};
use serde_json::json;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;

use crate::common::shared_turn;

use super::{Fake, LIMIT, answer, netcode_port, options, routes, source};

/// Certificates for the mutual TLS test, as PEM files in a directory of
/// their own.
struct Pki {
    dir: PathBuf,
    server_chain: Vec<rustls::pki_types::CertificateDer<'static>>,
    server_key: rustls::pki_types::PrivateKeyDer<'static>,
    client_ca: rustls::pki_types::CertificateDer<'static>,
}

/// A CA certificate and its issuer.
fn ca(name: &str) -> (rcgen::Certificate, rcgen::Issuer<'static, rcgen::KeyPair>) {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, name);
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    let certificate = params.self_signed(&key).unwrap();
    (certificate, rcgen::Issuer::new(params, key))
}

/// A leaf certificate for `names`, for `usage`, signed by `issuer`.
fn leaf(
    names: &[&str],
    usage: rcgen::ExtendedKeyUsagePurpose,
    issuer: &rcgen::Issuer<'_, rcgen::KeyPair>,
) -> (rcgen::Certificate, rcgen::KeyPair) {
    let key = rcgen::KeyPair::generate().unwrap();
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    let mut params = rcgen::CertificateParams::new(names).unwrap();
    params.extended_key_usages = vec![usage];
    (params.signed_by(&key, issuer).unwrap(), key)
}

impl Pki {
    /// A server CA and a certificate for 127.0.0.1 it signed; a client CA
    /// and a client certificate it signed; a second, unrelated CA with a
    /// client certificate of its own.
    fn new(name: &str) -> Self {
        use rcgen::ExtendedKeyUsagePurpose::{ClientAuth, ServerAuth};
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let (server_ca, server_issuer) = ca("allocator server CA");
        let (server_cert, server_key) = leaf(&["127.0.0.1"], ServerAuth, &server_issuer);
        let (client_ca, client_issuer) = ca("allocator client CA");
        let (client_cert, client_key) = leaf(&["matcher"], ClientAuth, &client_issuer);
        let (stranger_ca, stranger_issuer) = ca("some other CA");
        let (stranger_cert, stranger_key) = leaf(&["matcher"], ClientAuth, &stranger_issuer);
        for (file, pem) in [
            ("server-ca.pem", server_ca.pem()),
            ("client.pem", client_cert.pem()),
            ("client.key", client_key.serialize_pem()),
            ("stranger-ca.pem", stranger_ca.pem()),
            ("stranger.pem", stranger_cert.pem()),
            ("stranger.key", stranger_key.serialize_pem()),
        ] {
            std::fs::write(dir.join(file), pem).unwrap();
        }
        Self {
            dir,
            server_chain: vec![server_cert.der().clone()],
            server_key: rustls::pki_types::PrivatePkcs8KeyDer::from(server_key.serialize_der())
                .into(),
            client_ca: client_ca.der().clone(),
        }
    }

    fn path(&self, file: &str) -> Option<PathBuf> {
        Some(self.dir.join(file))
    }
}

/// The fake behind TLS that requires a client certificate signed by the
/// client CA: accepted handshakes serve the fake, failed ones are counted.
struct MutualTls {
    tcp: TcpListener,
    acceptor: TlsAcceptor,
    refused: Arc<AtomicUsize>,
}

impl axum::serve::Listener for MutualTls {
    type Io = tokio_rustls::server::TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((stream, peer)) = self.tcp.accept().await else {
                continue;
            };
            match tokio::time::timeout(LIMIT, self.acceptor.accept(stream)).await {
                Ok(Ok(tls)) => return (tls, peer),
                _ => {
                    self.refused.fetch_add(1, Ordering::SeqCst);
                }
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

async fn mutual_tls_allocator(pki: &Pki) -> (Arc<Fake>, String, Arc<AtomicUsize>) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots.add(pki.client_ca.clone()).unwrap();
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .build()
    .unwrap();
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(pki.server_chain.clone(), pki.server_key.clone_key())
        .unwrap();
    let tcp = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}", tcp.local_addr().unwrap());
    let refused = Arc::new(AtomicUsize::new(0));
    let listener = MutualTls {
        tcp,
        acceptor: TlsAcceptor::from(Arc::new(config)),
        refused: Arc::clone(&refused),
    };
    let fake = Arc::new(Fake::default());
    let app = routes(&fake);
    tokio::spawn(async move { axum::serve(listener, app).await });
    (fake, url, refused)
}

/// Whether `result` is the failure of a client certificate the allocator
/// refused: its TLS alert naming `cause`, or, when the refusal arrived
/// after the client had finished its side of the TLS 1.3 handshake, the
/// connection closed under the request. The callers also check that the
/// allocator counted a refused handshake and received no request.
fn refused_by_the_allocator(result: &Result<Allocated, AllocateError>, cause: &str) -> bool {
    matches!(result, Err(AllocateError::Unreachable(why))
        if why.contains(cause) || why.contains("connection was not ready") || why.contains("connection closed"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutual_tls_allocation_works_with_the_client_certificate_only() {
    let _turn = shared_turn().await;
    let pki = Pki::new("fleet-mutual-tls");
    let (fake, url, refused) = mutual_tls_allocator(&pki).await;
    fake.answer(200, answer("127.0.0.1", netcode_port(7010), json!([])));
    let with = |cert: &str, key: &str, ca: &str| {
        let mut options = options(&url);
        options.client_cert = pki.path(cert);
        options.client_key = pki.path(key);
        options.ca = pki.path(ca);
        source(&options)
    };
    let allocate = |fleet: FleetSource| async move {
        tokio::time::timeout(LIMIT, fleet.allocate())
            .await
            .expect("in time")
    };

    let allocated = allocate(with("client.pem", "client.key", "server-ca.pem"))
        .await
        .expect("allocated over mutual TLS");
    assert_eq!(allocated.server, "127.0.0.1:7010".parse().unwrap());
    assert_eq!(fake.requests().len(), 1);
    assert_eq!(refused.load(Ordering::SeqCst), 0);

    // No client certificate: the allocator refuses the handshake.
    let mut anonymous = options(&url);
    anonymous.ca = pki.path("server-ca.pem");
    let result = allocate(source(&anonymous)).await;
    assert!(
        refused_by_the_allocator(&result, "CertificateRequired"),
        "{result:?}"
    );
    // A client certificate from a CA the allocator does not trust.
    let result = allocate(with("stranger.pem", "stranger.key", "server-ca.pem")).await;
    assert!(refused_by_the_allocator(&result, "UnknownCA"), "{result:?}");
    // The fake counts a refused handshake on its own task, which may run
    // after the client has seen the refusal.
    let deadline = Instant::now() + LIMIT;
    while refused.load(Ordering::SeqCst) < 2 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(refused.load(Ordering::SeqCst), 2);
    // The allocator's certificate checked against another CA: the matcher
    // refuses it (the allocator sees the handshake fail too).
    let result = allocate(with("client.pem", "client.key", "stranger-ca.pem")).await;
    assert!(
        matches!(&result, Err(AllocateError::Unreachable(why)) if why.contains("UnknownIssuer")),
        "{result:?}"
    );
    assert_eq!(fake.requests().len(), 1, "no refused request got through");
}
