//! What the crate's tests share: reading samples out of an exposition in
//! the Prometheus text format, and netcode servers started without waiting
//! out the restart rule.

use std::collections::BTreeMap;

/// Every sample of `text`, by its series (name and labels as written).
/// Panics on a sample line without a number: the encoder wrote a bad line.
pub(crate) fn samples(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            let (series, value) = line
                .rsplit_once(' ')
                .unwrap_or_else(|| panic!("a sample line without a value: {line:?}"));
            let value = value
                .parse()
                .unwrap_or_else(|_| panic!("a sample whose value is not a number: {line:?}"));
            (series.to_string(), value)
        })
        .collect()
}

/// The value of `series` in `text`, which must have it.
pub(crate) fn sample(text: &str, series: &str) -> f64 {
    match samples(text).get(series) {
        Some(value) => *value,
        None => panic!("no sample {series} in:\n{text}"),
    }
}

/// The series of `text` whose name is `name`.
pub(crate) fn series_named(text: &str, name: &str) -> Vec<String> {
    samples(text)
        .into_keys()
        .filter(|series| series.split('{').next() == Some(name))
        .collect()
}

/// Opens `max_clients` slots on `server` without waiting out the restart
/// rule, and a token for `client_id` that it admits: issued as of the first
/// second the rule lets through, which may be a moment ahead.
pub(crate) fn start_with_token(
    server: &mut netcode_std::Server,
    max_clients: usize,
    protocol_id: u64,
    key: &netcode_std::Key,
    client_id: u64,
) -> [u8; netcode_std::CONNECT_TOKEN_BYTES] {
    let admitted_from = server.start_nowait(max_clients).unwrap();
    netcode_std::ConnectTokenBuilder::new(protocol_id, key, client_id)
        .server_addresses([server.public_address()])
        .issued_at(admitted_from)
        .generate()
        .unwrap()
}
