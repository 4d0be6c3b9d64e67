//! Tests in a real browser (headless Chromium through
//! wasm-bindgen-test-runner; `cargo test -p netcode-browser --target
//! wasm32-unknown-unknown` with CHROMEDRIVER set):
//!
//! * the golden vectors inside the browser: the set build.rs embedded (the
//!   directory `NETCODE_REFERENCE_VECTORS` names, else `vectors/data`) and
//!   a set generated here, every entry encoded byte for byte and verified
//!   field by field, so the wasm build's wire format and crypto are the
//!   native build's;
//! * the connection scenarios of `scenario` (handshake, payloads both ways
//!   at the session's limits, disconnect, a session closing) between this
//!   crate's driver and a netcode-proto server, end to end on wasm;
//! * `BrowserClient` and the JavaScript binding against Chromium's own
//!   WebTransport: refusals before and while opening a session.

use std::collections::{BTreeMap, BTreeSet};

use netcode_browser::js::NetcodeClient;
use netcode_browser::{BrowserClient, ConnectError};
use netcode_vectors::manifest::write::manifest_value;
use netcode_vectors::{VectorSet, encode, generate, hex, verify};
use sha2::{Digest, Sha256};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};

use crate::scenario;

wasm_bindgen_test_configure!(run_in_browser);

/// The vector set build.rs embedded.
mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded_vectors.rs"));
}

/// Every entry of `set`: its file has the manifest's length and SHA-256,
/// our encoder rebuilds it byte for byte from the entry's fields, and
/// decoding it matches every field. Returns how many entries were checked.
fn check_set(set: &VectorSet) -> usize {
    let manifest = &set.manifest;
    assert_eq!(
        manifest.vectors.len(),
        manifest.vector_count,
        "{}: vector_count disagrees with the entries",
        set.dir.display()
    );
    assert!(
        !manifest.vectors.is_empty(),
        "the manifest lists no vectors"
    );
    let mut failures = Vec::new();
    for vector in &manifest.vectors {
        let bytes = match set.read(vector) {
            Ok(bytes) => bytes,
            Err(e) => {
                failures.push(format!("{}: {e}", vector.name));
                continue;
            }
        };
        if bytes.len() != vector.bytes {
            failures.push(format!(
                "{}: {} bytes, manifest says {}",
                vector.name,
                bytes.len(),
                vector.bytes
            ));
        }
        let digest = hex::encode(Sha256::digest(&bytes).as_slice());
        if digest != vector.sha256 {
            failures.push(format!("{}: sha256 {digest}", vector.name));
        }
        match encode(vector) {
            Ok(encoded) if encoded == bytes => {}
            Ok(_) => failures.push(format!("{}: re-encoding differs", vector.name)),
            Err(e) => failures.push(format!("{}: encode: {e}", vector.name)),
        }
        if let Err(e) = verify(set, vector, &bytes) {
            failures.push(format!("{}: decode: {e}", vector.name));
        }
    }
    assert!(
        failures.is_empty(),
        "{}: {} problem(s):\n{}",
        set.dir.display(),
        failures.len(),
        failures.join("\n")
    );
    manifest.vectors.len()
}

#[wasm_bindgen_test]
fn the_embedded_vector_set_encodes_and_verifies_in_the_browser() {
    let Some(dir) = embedded::DIR else {
        panic!(
            "no vector set was embedded: set NETCODE_REFERENCE_VECTORS or build in the workspace"
        );
    };
    let files: BTreeMap<String, Vec<u8>> = embedded::FILES
        .iter()
        .map(|(name, bytes)| ((*name).to_owned(), bytes.to_vec()))
        .collect();
    let set = VectorSet::from_memory(dir, embedded::MANIFEST.to_vec(), files)
        .unwrap_or_else(|e| panic!("{dir}: {e}"));
    // Every .bin file is an entry's, and every entry has its file.
    let listed: BTreeSet<&str> = set
        .manifest
        .vectors
        .iter()
        .map(|v| v.file.as_str())
        .collect();
    let present: BTreeSet<&str> = embedded::FILES.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        listed, present,
        "{dir}: the .bin files are not the listed ones"
    );
    let checked = check_set(&set);
    console_log!("{dir}: {checked} vectors encoded and verified in the browser");
}

#[wasm_bindgen_test]
fn a_generated_vector_set_encodes_and_verifies_in_the_browser() {
    // "now" for the generated timestamps: the suite's fixed one is not
    // needed here, any value makes a conforming set.
    let manifest = generate::another_set(1_900_000_000).expect("the generated set must build");
    let generator = serde_json::json!({ "implementation": "netcode-browser tests/it/web.rs" });
    let manifest_bytes = serde_json::to_vec_pretty(&manifest_value(&manifest, generator))
        .expect("the manifest must serialize");
    let mut files = BTreeMap::new();
    for vector in &manifest.vectors {
        let bytes = encode(vector).unwrap_or_else(|e| panic!("{}: encode: {e}", vector.name));
        files.insert(vector.file.clone(), bytes);
    }
    // Parsed back from its JSON, as a set read from disk would be.
    let set = VectorSet::from_memory(generate::SET_NAME, manifest_bytes, files)
        .unwrap_or_else(|e| panic!("the generated manifest must parse: {e}"));
    let checked = check_set(&set);
    console_log!("generated set: {checked} vectors encoded and verified in the browser");
}

#[wasm_bindgen_test]
fn handshake_payloads_and_disconnect() {
    scenario::handshake_payloads_and_disconnect();
}

#[wasm_bindgen_test]
fn a_closed_session_disconnects_the_client() {
    scenario::a_closed_session_disconnects_the_client();
}

#[wasm_bindgen_test]
fn a_server_disconnect_then_close_applies_in_order() {
    scenario::a_server_disconnect_then_close_applies_in_order();
}

/// A 2048-byte token that does not read (wrong version info).
const BAD_TOKEN: [u8; 2048] = [0; 2048];

#[wasm_bindgen_test]
async fn an_unreadable_token_is_refused_before_any_session() {
    let result = BrowserClient::connect("https://127.0.0.1:9/", &[], &BAD_TOKEN).await;
    assert!(
        matches!(result, Err(ConnectError::InvalidConnectToken(_))),
        "{result:?}"
    );
}

/// A token that reads, for a server nobody runs.
fn readable_token() -> [u8; 2048] {
    use netcode_proto::seeded::SeededRng;
    use netcode_proto::token::ConnectTokenParams;
    use netcode_proto::{Key, generate_connect_token};
    let key = Key::from_bytes([9; 32]);
    let params = ConnectTokenParams {
        protocol_id: 1,
        private_key: &key,
        client_id: 1,
        public_addresses: &["127.0.0.1:9".parse().expect("an address")],
        internal_addresses: None,
        create_timestamp: 1_800_000_000,
        expire_seconds: 30,
        timeout_seconds: 5,
        user_data: &[0; 256],
    };
    generate_connect_token(&params, &mut SeededRng::new(1))
        .and_then(|t| t.write())
        .expect("a token")
}

#[wasm_bindgen_test]
async fn a_session_that_cannot_open_fails_with_the_browser_s_message() {
    // Nothing listens on UDP port 9 (discard) on this machine.
    let result =
        BrowserClient::connect("https://127.0.0.1:9/", &[[7; 32]], &readable_token()).await;
    let Err(ConnectError::SessionFailed(message)) = result else {
        panic!("expected SessionFailed, got {result:?}");
    };
    assert!(!message.is_empty());
    console_log!("Chromium refused the session: {message}");
}

#[wasm_bindgen_test]
async fn a_malformed_url_fails_without_a_panic() {
    let result = BrowserClient::connect("not a url", &[], &readable_token()).await;
    assert!(
        matches!(result, Err(ConnectError::SessionFailed(_))),
        "{result:?}"
    );
}

/// The message of the `Error` a JavaScript call rejected with.
fn error_message(error: wasm_bindgen::JsError) -> String {
    let value = JsValue::from(error);
    let error = value
        .dyn_ref::<js_sys::Error>()
        .expect("the binding rejects with an Error");
    String::from(error.message())
}

#[wasm_bindgen_test]
async fn the_javascript_binding_rejects_with_readable_errors() {
    let bad_hash = NetcodeClient::connect(
        "https://127.0.0.1:9/".into(),
        "12:34".into(),
        readable_token().to_vec(),
    )
    .await;
    let message = error_message(bad_hash.expect_err("a 2-byte hash must be refused"));
    assert_eq!(
        message,
        "bad certificate hash: 4 hexadecimal digits, where a SHA-256 has 64"
    );

    let bad_token =
        NetcodeClient::connect("https://127.0.0.1:9/".into(), "".into(), vec![1; 10]).await;
    let message = error_message(bad_token.expect_err("a 10-byte token must be refused"));
    assert_eq!(message, "invalid connect token: token has the wrong size");
}
