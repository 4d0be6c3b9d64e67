//! Proof that every field of every entry is compared: changing any one
//! field an entry gives (other than descriptions) must make the manifest
//! unreadable, or decoding disagree, or encoding differ.

use std::collections::BTreeMap;

use netcode_vectors::{Vector, VectorSet, encode, verify};

use super::entries;

/// Fields that only describe an entry: changing them changes no byte.
const INFORMATIONAL: &[&str] = &[
    "name",
    "file",
    "description",
    "sha256",
    "string",
    "type_name",
    "packet_type_name",
    "direction",
    "key_name",
    "user_data_recipe",
    "payload_recipe",
];

fn leaf_paths(value: &serde_json::Value, path: String, out: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, child) in map {
                leaf_paths(child, format!("{path}/{key}"), out);
            }
        }
        serde_json::Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                leaf_paths(child, format!("{path}/{index}"), out);
            }
        }
        _ => out.push(path),
    }
}

/// The field name a leaf path ends in (an array element is named by its array).
fn field_name(path: &str) -> &str {
    path.rsplit('/')
        .find(|segment| segment.parse::<usize>().is_err())
        .unwrap_or("")
}

/// Changes the leaf at `path` of `manifest`; `None` when the leaf is
/// informational or the numeric twin of another field. A `*_vector` name is
/// changed to `replacements[name]`.
fn mutate(
    manifest: &mut serde_json::Value,
    path: &str,
    replacements: &BTreeMap<String, String>,
) -> Option<String> {
    use serde_json::Value;
    let name = field_name(path).to_owned();
    if INFORMATIONAL.contains(&name.as_str()) {
        return None;
    }
    let (parent_path, key) = path.rsplit_once('/')?;
    if let Some(base) = name.strip_suffix("_hex")
        && manifest
            .pointer(&format!("{parent_path}/{base}"))
            .is_some_and(Value::is_number)
    {
        return None; // changed together with its number
    }
    let leaf = manifest.pointer_mut(path)?;
    let description = match leaf.clone() {
        Value::Bool(b) => {
            *leaf = Value::Bool(!b);
            format!("{path}: {b} -> {}", !b)
        }
        Value::Number(n) if n.as_u64().is_some() => {
            let old = n.as_u64()?;
            let new = old ^ 1;
            *leaf = Value::from(new);
            let twin = format!("{parent_path}/{key}_hex");
            if let Some(twin) = manifest.pointer_mut(&twin) {
                *twin = Value::from(format!("{new:#018x}"));
            }
            format!("{path}: {old} -> {new}")
        }
        Value::Number(n) => {
            let old = n.as_i64()?;
            *leaf = Value::from(old ^ 1);
            format!("{path}: {old} -> {}", old ^ 1)
        }
        Value::String(text) if name.ends_with("_hex") => {
            let new = match text.pop_last_digit() {
                None => "00".to_owned(),
                Some((head, digit)) => format!("{head}{:x}", digit ^ 1),
            };
            *leaf = Value::from(new.clone());
            format!("{path}: ..{} -> ..{}", tail(&text), tail(&new))
        }
        Value::String(text) if name.ends_with("_vector") => {
            let new = replacements
                .get(&text)
                .map_or("no_such_vector", String::as_str);
            *leaf = Value::from(new);
            format!("{path}: {text} -> {new}")
        }
        Value::String(text) if name == "kind" => {
            let new = if text == "packet_denied" {
                "packet_disconnect"
            } else {
                "packet_denied"
            };
            *leaf = Value::from(new);
            format!("{path}: {text} -> {new}")
        }
        Value::String(text) if name == "algorithm" => {
            let new = if text.starts_with('x') {
                "chacha20poly1305_ietf"
            } else {
                "xchacha20poly1305_ietf"
            };
            *leaf = Value::from(new);
            format!("{path}: {text} -> {new}")
        }
        other => panic!("{path}: no mutation for {other}; add one or list it as informational"),
    };
    Some(description)
}

fn tail(text: &str) -> &str {
    &text[text.len().saturating_sub(6)..]
}

trait PopLastDigit {
    fn pop_last_digit(&self) -> Option<(String, u32)>;
}

impl PopLastDigit for String {
    fn pop_last_digit(&self) -> Option<(String, u32)> {
        let mut head = self.clone();
        let digit = head.pop()?.to_digit(16)?;
        Some((head, digit))
    }
}

/// For each vector, another vector of the set whose file differs from its
/// own, so that pointing a `*_vector` field at it must be noticed (or a name
/// no vector has, when every other file is the same).
fn replacements(set: &VectorSet) -> BTreeMap<String, String> {
    let files: Vec<(&str, Vec<u8>)> = entries(set)
        .iter()
        .map(|v| (v.name.as_str(), set.read(v).unwrap()))
        .collect();
    files
        .iter()
        .filter_map(|(name, bytes)| {
            let other = files.iter().find(|(_, b)| b != bytes)?;
            Some(((*name).to_owned(), other.0.to_owned()))
        })
        .collect()
}

/// Changing any one field an entry gives (other than descriptions) must make
/// the manifest unreadable, or decoding disagree, or encoding differ: proof
/// that every field is actually compared.
pub(crate) fn every_manifest_field_is_checked(set: &VectorSet) {
    let original: serde_json::Value = serde_json::from_slice(&set.manifest_bytes).unwrap();
    let named_keys = &set.manifest.named_keys;
    let replacements = replacements(set);
    let mut mutations = 0;
    let mut unnoticed = Vec::new();
    for (index, vector) in entries(set).iter().enumerate() {
        let bytes = set.read(vector).unwrap();
        let entry = &original["vectors"][index];
        let mut paths = Vec::new();
        leaf_paths(entry, String::new(), &mut paths);
        let before = mutations;
        for path in paths {
            let mut changed = entry.clone();
            let Some(description) = mutate(&mut changed, &path, &replacements) else {
                continue;
            };
            mutations += 1;
            let Ok(changed_vector) = Vector::from_value(&changed, named_keys) else {
                continue; // the parser refused the change
            };
            // Referenced files are looked up in the unchanged set.
            let decoded = verify(set, &changed_vector, &bytes).is_err();
            let encoded = encode(&changed_vector).map_or(true, |e| e != bytes);
            if !decoded && !encoded {
                unnoticed.push(format!("{}: {description}", vector.name));
            }
        }
        assert!(mutations > before, "{}: no field was changed", vector.name);
    }
    assert!(
        unnoticed.is_empty(),
        "{} of {mutations} field changes went unnoticed:\n{}",
        unnoticed.len(),
        unnoticed.join("\n")
    );
    println!(
        "{}: {mutations} single-field manifest changes, all noticed",
        set.dir.display()
    );
}
