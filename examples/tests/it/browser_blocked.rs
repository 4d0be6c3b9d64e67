//! The WebSocket fallback on a network that drops UDP: in a network
//! namespace of the test's own (`unshare -n`, as root), an nftables rule
//! drops every UDP packet to the browser demo's WebTransport port; the
//! demo's page in headless Chromium, refused with an expired and a foreign
//! token and then exchanging payloads as `browser` does, must end up on
//! the WebSocket, its session open within its 3 s bound (and less than two
//! seconds after it), its payloads intact both ways.
//!
//! Needs Chromium and the web package (as every browser test), and root
//! with `unshare`, `ip` and `nft` (Debian's nftables). Without the tools
//! it says SKIPPED and passes, unless `NETCODE_REQUIRE_NETNS=1` (set by
//! `.ci/run`) makes it fail.

#![cfg(unix)]

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use test_fixtures::browser::{BrowserSetup, Engine};

/// The page's bound on WebTransport before it takes the WebSocket
/// (netcode-browser's `DEFAULT_FALLBACK_AFTER_MS`).
const FALLBACK_MS: u64 = 3000;

/// Whether this process may make a network namespace with an nftables
/// rule: root, and the three programs.
fn netns_available() -> Result<(), String> {
    let missing: Vec<&str> = ["unshare", "ip", "nft"]
        .into_iter()
        .filter(|program| {
            Command::new("sh")
                .args(["-c", &format!("command -v {program}")])
                .output()
                .map_or(true, |out| !out.status.success())
        })
        .collect();
    if !missing.is_empty() {
        return Err(format!("no {}", missing.join(", ")));
    }
    let probe = Command::new("unshare")
        .args(["-n", "true"])
        .output()
        .map_err(|e| e.to_string())?;
    if !probe.status.success() {
        return Err("unshare -n is not permitted here (root needed)".into());
    }
    Ok(())
}

/// The script run inside the namespace: loopback up, UDP to the
/// WebTransport port dropped, the demo and the page, then the demo's
/// `/status` once the page is done, on a line of its own after `STATUS `.
const SCRIPT: &str = r#"
set -eu
ip link set lo up
nft add table inet block
nft add chain inet block in '{ type filter hook input priority 0; }'
nft add rule inet block in udp dport 40001 drop
"$DEMO" --udp 127.0.0.1:40000 --webtransport 127.0.0.1:40001 --websocket 127.0.0.1:40002 \
  --http 127.0.0.1:8080 --web "$PKG" --seconds 60 > "$DIR/demo.out" 2>&1 &
demo=$!
for _ in $(seq 100); do grep -q "open http" "$DIR/demo.out" && break; sleep 0.1; done
"$BROWSER" --headless=new --no-sandbox --disable-gpu --no-first-run \
  --user-data-dir="$DIR/profile" "http://127.0.0.1:8080/?test=1&seconds=4" > /dev/null 2>&1 &
browser=$!
status() {
  exec 3<>/dev/tcp/127.0.0.1/8080
  printf 'GET /status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' >&3
  sed '1,/^\r$/d' <&3
  exec 3>&-
}
for _ in $(seq 300); do
  answer=$(status || true)
  case "$answer" in *'"phase":"done"'*|*'"phase":"failed"'*) break ;; esac
  sleep 0.2
done
echo "STATUS $answer"
kill -9 $browser $demo 2>/dev/null || true
"#;

#[test]
fn a_page_on_a_network_that_drops_udp_falls_back_on_the_websocket_within_its_bound() {
    let Some(setup) = BrowserSetup::from_env("the blocked-UDP fallback test", Engine::Chromium)
    else {
        return;
    };
    if let Err(why) = netns_available() {
        assert!(
            std::env::var("NETCODE_REQUIRE_NETNS").as_deref() != Ok("1"),
            "NETCODE_REQUIRE_NETNS=1 but {why}"
        );
        eprintln!("SKIPPED the blocked-UDP fallback test: {why}");
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser-blocked");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new("unshare")
        .args(["-n", "bash", "-c", SCRIPT])
        .env("DEMO", env!("CARGO_BIN_EXE_netcode-browser-demo"))
        .env("PKG", &setup.package)
        .env("BROWSER", &setup.program)
        .env("DIR", &dir)
        .output()
        .expect("unshare");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let demo = std::fs::read_to_string(dir.join("demo.out")).unwrap_or_default();
    let context = format!(
        "script: {}\n{stdout}\n{}\n--- demo\n{demo}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let status: Value = stdout
        .lines()
        .find_map(|line| line.strip_prefix("STATUS "))
        .and_then(|json| serde_json::from_str(json).ok())
        .unwrap_or_else(|| panic!("no status from the namespace\n{context}"));
    let page = status["pages"]
        .as_object()
        .and_then(|pages| pages.values().next().cloned())
        .unwrap_or_else(|| panic!("no page report: {status}\n{context}"));
    assert_eq!(page["phase"], "done", "{page}\n{context}");
    assert_eq!(page["transport"], "websocket", "{page}");
    let open_ms = page["openMs"].as_u64().unwrap_or(u64::MAX);
    assert!(
        (FALLBACK_MS..FALLBACK_MS + 2000).contains(&open_ms),
        "the session opened {open_ms} ms after the page asked, with a bound of {FALLBACK_MS} ms"
    );
    assert!(page["intact"].as_u64().unwrap_or(0) >= 20, "{page}");
    assert_eq!(page["wrong"], 0, "{page}");
    for kind in ["expired", "foreign"] {
        let state = page["refused"][kind].as_str().unwrap_or("none");
        assert!(state != "connected" && state != "none", "{kind}: {state}");
    }
    let departed = status["departed"].as_array().cloned().unwrap_or_default();
    assert!(
        departed
            .iter()
            .any(|c| c["transport"] == "websocket" && c["reason"] == "client disconnected"),
        "the page left its slot cleanly over the WebSocket: {status}"
    );
    println!("fell back after {open_ms} ms");
}
