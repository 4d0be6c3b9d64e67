//! What the crate's tests share: reading samples out of an exposition in
//! the Prometheus text format.
#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeMap;

/// Every sample of `text`, by its series (name and labels as written).
/// Panics on a sample line without a number: the encoder wrote a bad line.
pub fn samples(text: &str) -> BTreeMap<String, f64> {
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
pub fn sample(text: &str, series: &str) -> f64 {
    match samples(text).get(series) {
        Some(value) => *value,
        None => panic!("no sample {series} in:\n{text}"),
    }
}

/// The series of `text` whose name is `name`.
pub fn series_named(text: &str, name: &str) -> Vec<String> {
    samples(text)
        .into_keys()
        .filter(|series| series.split('{').next() == Some(name))
        .collect()
}
