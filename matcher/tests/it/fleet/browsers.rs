//! A browser's request in fleet mode: the allocation selects servers that
//! take browsers (the label `netcode-agones-server --webtransport` sets),
//! and the answer hands the browser that server's WebTransport URL and
//! certificate hash, read from the allocation's annotations, with a token
//! for its address. A server without them is a bad answer (502).

use netcode_matcher::{BROWSER_HASH_ANNOTATION, BROWSER_LABEL, BROWSER_URL_ANNOTATION};

use super::*;

/// Asks the token route, allocating from `fleet`, for a browser's token.
async fn ask_for_browser(fleet: FleetSource, client_id: u64) -> (StatusCode, Value) {
    let body = json!({
        "protocol_id": format!("{PROTOCOL_ID:#x}"),
        "client_id": client_id,
        "transport": "webtransport",
    });
    let answer = ask_route_with(fleet, &body).await;
    (answer.status, answer.json)
}

#[tokio::test]
async fn a_browser_gets_the_allocated_servers_url_and_hash() {
    let _turn = shared_turn().await;
    let (fake, url) = plain_allocator().await;
    let hash = "ab".repeat(32);
    let mut allocated: Value =
        serde_json::from_str(&answer("127.0.0.1", netcode_port(7001), json!([]))).unwrap();
    allocated["metadata"]["annotations"] = json!({
        BROWSER_URL_ANNOTATION: "https://127.0.0.1:7002/netcode",
        BROWSER_HASH_ANNOTATION: hash,
    });
    fake.answer(200, allocated.to_string());
    let mut options = options(&url);
    options.selectors = vec![("agones.dev/fleet".into(), "netcode".into())];

    let (status, json) = ask_for_browser(source(&options), 42).await;
    assert_eq!(status, StatusCode::OK, "{json}");
    assert_eq!(
        json["webtransport"]["url"],
        "https://127.0.0.1:7002/netcode"
    );
    assert_eq!(json["webtransport"]["certificate_hash"], hash);
    assert_eq!(json["allocated"]["server"], "127.0.0.1:7001");
    let token = STANDARD
        .decode(json["connect_token"].as_str().unwrap())
        .unwrap();
    let token = ConnectToken::read(&token).unwrap();
    assert_eq!(token.protocol_id, PROTOCOL_ID);
    assert_eq!(
        token.server_addresses[..],
        ["127.0.0.1:7001".parse().unwrap()]
    );

    // The allocation asked for a server that takes browsers.
    let requests = fake.requests();
    assert_eq!(
        requests[0].body["gameServerSelectors"][0]["matchLabels"],
        json!({"agones.dev/fleet": "netcode", BROWSER_LABEL: "true"})
    );

    // A server that publishes no URL or hash cannot take the browser.
    fake.answer(200, answer("127.0.0.1", netcode_port(7001), json!([])));
    let (status, json) = ask_for_browser(source(&options), 43).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{json}");
}
