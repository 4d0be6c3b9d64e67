//! Certificate rotation: the hash file follows the certificate, sessions
//! opened before a rotation go on, new sessions must pin the new hash.

use netcode_webtransport::{WebTransportClient, self_signed_identity};

use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_certificate_serves_new_sessions_and_spares_open_ones() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("rotation");
    std::fs::create_dir_all(&dir).unwrap();
    let hash_file = dir.join("hash");
    let _ = std::fs::remove_file(&hash_file);
    let path = hash_file.clone();
    let rig = Rig::start(4, move |config| config.hash_file = Some(path)).await;
    let read = || std::fs::read_to_string(&hash_file).unwrap();
    let old = rig.web.certificate_hash();
    assert_eq!(read(), format!("{}\n", rig.web.certificate_hash_hex()));

    let mut before = within(
        "a session",
        WebTransportClient::connect(&rig.url(), &[old], &rig.token(1)),
    )
    .await
    .unwrap();
    within("connects", before.connected()).await.unwrap();

    rig.web
        .set_identity(self_signed_identity(&["127.0.0.1".into()]).unwrap())
        .unwrap();
    let new = rig.web.certificate_hash();
    assert_ne!(new, old);
    assert_eq!(read(), format!("{}\n", rig.web.certificate_hash_hex()));

    // The open session goes on.
    before.send(b"still served").unwrap();
    assert_eq!(
        within("an echo", before.recv()).await.as_deref(),
        Some(&b"still served"[..])
    );
    // A new session pinning the old hash is refused; the new hash works.
    let stale = within(
        "a stale pin",
        WebTransportClient::connect(&rig.url(), &[old], &rig.token(2)),
    )
    .await;
    assert!(stale.is_err(), "a session with the old hash opened");
    let mut after = within(
        "a session",
        WebTransportClient::connect(&rig.url(), &[new], &rig.token(3)),
    )
    .await
    .unwrap();
    within("connects", after.connected()).await.unwrap();
}
