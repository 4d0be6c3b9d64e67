//! The allocator's JSON, as its REST gateway speaks it: the body of
//! `POST /gameserverallocation` and what is read from the answer.
//!
//! The gateway decodes requests with protobuf's JSON mapping (field names
//! as in `allocation.proto`, enum values by their proto names: the state
//! is `"READY"`, not the `"Ready"` of the Kubernetes `GameServerAllocation`
//! object; an enum name it does not know is silently dropped there, so a
//! misspelling would go unnoticed). Answers carry every field, empty ones
//! included, sometimes as `null`, and 64-bit integers as strings: the
//! reading here takes what it needs and ignores the rest, accepting a
//! port as a number or a numeric string.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

/// The body asking for one `Ready` game server of `namespace` whose labels
/// include all of `match_labels`, with `labels` and `annotations` to put
/// on it once allocated (omitted when both are empty).
pub(crate) fn request_body(
    namespace: &str,
    match_labels: &BTreeMap<String, String>,
    labels: &BTreeMap<String, String>,
    annotations: &BTreeMap<String, String>,
) -> Value {
    let mut body = json!({
        "namespace": namespace,
        "gameServerSelectors": [{
            "matchLabels": match_labels,
            "gameServerState": "READY",
        }],
    });
    if !labels.is_empty() || !annotations.is_empty() {
        body["metadata"] = json!({ "labels": labels, "annotations": annotations });
    }
    body
}

/// What the matcher takes from a successful answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Answer {
    /// `gameServerName` (empty if absent).
    pub(crate) game_server_name: String,
    /// `nodeName` (empty if absent).
    pub(crate) node_name: String,
    /// `address` (empty if absent).
    pub(crate) address: String,
    /// `addresses`, as (type, address) pairs, in order.
    pub(crate) addresses: Vec<(String, String)>,
    /// `ports`, as (name, port) pairs, in order; entries whose port is not
    /// a number are kept with `None`, so that a message can name them.
    pub(crate) ports: Vec<(String, Option<i64>)>,
    /// `metadata.annotations`: the allocated GameServer's annotations
    /// (those its server set through the SDK carry the `agones.dev/sdk-`
    /// prefix); entries that are not strings are left out.
    pub(crate) annotations: BTreeMap<String, String>,
}

/// Reads an answer body: `Err` says why it is not an allocation answer.
pub(crate) fn parse_answer(body: &[u8]) -> Result<Answer, String> {
    let value: Value =
        serde_json::from_slice(body).map_err(|e| format!("the answer is not JSON: {e}"))?;
    let Value::Object(object) = value else {
        return Err("the answer is not a JSON object".into());
    };
    let ports = list(&object, "ports")
        .iter()
        .filter_map(Value::as_object)
        .map(|port| (text(port, "name"), number(port.get("port"))))
        .collect();
    let addresses = list(&object, "addresses")
        .iter()
        .filter_map(Value::as_object)
        .map(|entry| (text(entry, "type"), text(entry, "address")))
        .collect();
    let annotations = (object.get("metadata"))
        .and_then(Value::as_object)
        .and_then(|metadata| metadata.get("annotations"))
        .and_then(Value::as_object)
        .map(|annotations| {
            annotations
                .iter()
                .filter_map(|(key, value)| Some((key.clone(), value.as_str()?.to_owned())))
                .collect()
        })
        .unwrap_or_default();
    Ok(Answer {
        game_server_name: text(&object, "gameServerName"),
        node_name: text(&object, "nodeName"),
        address: text(&object, "address"),
        addresses,
        ports,
        annotations,
    })
}

/// The string at `key`, or empty (absent, `null` or not a string).
fn text(object: &Map<String, Value>, key: &str) -> String {
    object
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// The array at `key`, or none (absent, `null` or not an array).
fn list<'a>(object: &'a Map<String, Value>, key: &str) -> &'a [Value] {
    object
        .get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// An integer written as a JSON number or as a string of digits.
fn number(value: Option<&Value>) -> Option<i64> {
    match value? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn the_request_names_namespace_selector_and_ready_state() {
        let none = BTreeMap::new();
        let body = request_body(
            "games",
            &labels(&[("agones.dev/fleet", "netcode")]),
            &none,
            &none,
        );
        assert_eq!(
            body,
            json!({
                "namespace": "games",
                "gameServerSelectors": [{
                    "matchLabels": {"agones.dev/fleet": "netcode"},
                    "gameServerState": "READY",
                }],
            })
        );
        let with_metadata = request_body("d", &none, &labels(&[("a", "b")]), &none);
        assert_eq!(
            with_metadata["metadata"],
            json!({"labels": {"a": "b"}, "annotations": {}})
        );
    }

    #[test]
    fn answers_are_read_leniently() {
        let answer = parse_answer(
            br#"{"gameServerName": "netcode-x", "ports": [{"name": "metrics", "port": "9100"},
                 {"name": "netcode", "port": 7042}, {"name": "odd", "port": true}, 5],
                 "address": "10.0.0.3", "addresses": null, "nodeName": "node-1",
                 "source": "local", "metadata": null, "counters": {}, "lists": {}}"#,
        )
        .unwrap();
        assert_eq!(answer.game_server_name, "netcode-x");
        assert_eq!(answer.node_name, "node-1");
        assert_eq!(answer.address, "10.0.0.3");
        assert!(answer.addresses.is_empty());
        assert!(answer.annotations.is_empty());
        assert_eq!(
            answer.ports,
            [
                ("metrics".to_owned(), Some(9100)),
                ("netcode".to_owned(), Some(7042)),
                ("odd".to_owned(), None),
            ]
        );
        let sparse = parse_answer(br#"{"addresses": [{"type": "InternalIP"}]}"#).unwrap();
        assert_eq!(sparse.addresses, [("InternalIP".to_owned(), String::new())]);
        assert!(sparse.ports.is_empty());
        let annotated = parse_answer(
            br#"{"metadata": {"labels": {"a": "b"}, "annotations": {
                 "agones.dev/sdk-netcode-cert-sha256": "ab12", "odd": 5}}}"#,
        )
        .unwrap();
        assert_eq!(
            annotated.annotations,
            labels(&[("agones.dev/sdk-netcode-cert-sha256", "ab12")])
        );
        for bad in [&b""[..], b"[]", b"\"x\"", b"{", b"null"] {
            assert!(parse_answer(bad).is_err(), "{bad:?}");
        }
    }
}
