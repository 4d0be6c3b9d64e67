//! Typed manifest values written back as `manifest.json` JSON, the inverse
//! of the reader: every type serializes itself (see [`crate::manifest`]),
//! and each 64-bit value gets its `_hex` twin.
//!
//! Every field the reader reads is written, byte strings as lowercase hex.
//! Informational fields the typed values do not keep (recipes,
//! conventions) are not written; the reader does not need them.

use serde::Serialize;
use serde_json::Value;

use super::read::ManifestFile;
use super::{FORMAT, FORMAT_VERSION, Manifest, Vector, json};

/// The whole manifest as JSON, with `generator` saying what made the set.
pub fn manifest_value(manifest: &Manifest, generator: Value) -> Value {
    let file = ManifestFile {
        format: FORMAT.to_owned(),
        format_version: FORMAT_VERSION,
        set: manifest.set.clone(),
        generator: Some(generator),
        conventions: None,
        protocol: manifest.protocol.clone(),
        named_keys: manifest.named_keys.clone(),
        vector_count: manifest.vector_count,
        vectors: manifest.vectors.iter().map(vector_value).collect(),
    };
    let mut value = to_json(&file);
    if let Some(protocol) = value.get_mut("protocol") {
        json::add_twins(protocol);
    }
    value
}

/// One entry of `manifest.vectors` as JSON.
pub fn vector_value(vector: &Vector) -> Value {
    let mut value = to_json(vector);
    json::add_twins(&mut value);
    value
}

/// `value` as JSON.
fn to_json(value: &impl Serialize) -> Value {
    serde_json::to_value(value).unwrap_or_else(|e| {
        // The manifest's types are structs and enums of strings, numbers,
        // booleans and lists, maps with string keys: nothing else can come
        // out, and nothing can fail.
        unreachable!("a manifest value serialized with an error: {e}")
    })
}
