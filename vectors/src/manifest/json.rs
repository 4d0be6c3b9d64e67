//! What maps the manifest's JSON onto its types beyond a field for a field
//! (STANDARD.md: none; the manifest's own format):
//!
//! * every read goes through `serde_path_to_error`, so that an error names
//!   the field it is in (`encryption.key_hex: invalid hex digit 'z'`);
//! * byte strings are lowercase hex ([`hex`]);
//! * a 64-bit value may come with a `<field>_hex` twin, which must agree
//!   with it; it is checked and removed before a read ([`strip`]) and
//!   written after ([`add_twins`]), so that no type holds it;
//! * informational recipes of byte strings are accepted and dropped;
//! * an object whose fields belong to several types side by side is taken
//!   apart by the field names each type declares ([`take`]), and a type
//!   that flattens another is read with the other's errors still naming
//!   their field ([`read_flattened`]).

use serde::de::{self, DeserializeOwned, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};
use serde_path_to_error::Segment;

use crate::{Error, Result};

/// The 64-bit fields, each an exact JSON integer with a `<field>_hex` twin:
/// the same value as a `0x`-prefixed 16-digit numeral. A twin is optional
/// to read and always written.
const TWINNED: [&str; 9] = [
    "server_global_sequence_base",
    "client_id",
    "protocol_id",
    "create_timestamp",
    "expire_timestamp",
    "connect_token_expire_timestamp",
    "sequence",
    "challenge_sequence",
    "challenge_token_sequence",
];

/// The byte strings `<x>_hex` that may come with a `<x>_recipe` saying how
/// they were made: informational, accepted with any value and not kept.
const WITH_RECIPE: [&str; 2] = ["user_data", "payload"];

/// The twin of a 64-bit value.
fn twin(value: u64) -> String {
    format!("{value:#018x}")
}

/// Checks the twins in the object `value` and every object within it, and
/// removes them and the recipes; `path` names `value` in errors (empty at
/// the top). A twin or recipe is refused where its field is not given.
pub(super) fn strip(value: &mut Value, path: &str) -> Result<()> {
    let at = |message: String| match path {
        "" => Error::new(message),
        _ => Error::new(message).context(path),
    };
    match value {
        Value::Object(fields) => {
            for name in TWINNED {
                let key = format!("{name}_hex");
                let Some(text) = fields.remove(&key) else {
                    continue;
                };
                let Some(number) = fields.get(name) else {
                    return Err(at(format!("{key} is given without {name}")));
                };
                // A null twin is no twin. A value that is not a 64-bit
                // integer is refused when the object is read.
                let text =
                    Option::<String>::deserialize(&text).map_err(|e| at(format!("{key}: {e}")))?;
                if let (Some(text), Some(number)) = (text, number.as_u64())
                    && text != twin(number)
                {
                    let expected = twin(number);
                    return Err(at(format!(
                        "{key} is {text:?} but {name} is {number} ({expected})"
                    )));
                }
            }
            for name in WITH_RECIPE {
                let key = format!("{name}_recipe");
                if fields.remove(&key).is_some() && !fields.contains_key(&format!("{name}_hex")) {
                    return Err(at(format!("{key} is given without {name}_hex")));
                }
            }
            for (key, child) in fields.iter_mut() {
                let child_path = match path {
                    "" => key.clone(),
                    _ => format!("{path}.{key}"),
                };
                strip(child, &child_path)?;
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter_mut().enumerate() {
                strip(item, &format!("{path}[{index}]"))?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Writes the twin of every 64-bit field in the object `value` and every
/// object within it.
pub(super) fn add_twins(value: &mut Value) {
    match value {
        Value::Object(fields) => {
            for (key, mut child) in std::mem::take(fields) {
                add_twins(&mut child);
                let number = child.as_u64().filter(|_| TWINNED.contains(&key.as_str()));
                if let Some(number) = number {
                    fields.insert(format!("{key}_hex"), Value::from(twin(number)));
                }
                fields.insert(key, child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(add_twins),
        _ => {}
    }
}

/// Reads `T` from `value`; an error names the path to the field that
/// failed (`server_addresses[1].port: ...`), or for an unknown field, to
/// the object it is in (`encryption: unknown field `z``).
pub(super) fn read<T: DeserializeOwned>(value: &Value) -> Result<T> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let message = e.inner().to_string();
        let mut path = e.path().to_string();
        // serde_path_to_error ends the path of an unknown field with the
        // field itself, which the message names already.
        if let Some(Segment::Map { key }) = e.path().iter().next_back()
            && message.starts_with(&format!("unknown field `{key}`"))
        {
            path.truncate(path.len() - key.len());
            path.truncate(path.trim_end_matches('.').len());
        }
        match path.as_str() {
            "" | "." => Error::new(message),
            _ => Error::new(format!("{path}: {message}")),
        }
    })
}

/// Takes the fields `T` declares out of the object `fields`, and reads `T`
/// from them.
pub(super) fn take<T: DeserializeOwned>(fields: &mut Map<String, Value>) -> Result<T> {
    let own = field_names::<T>()
        .iter()
        .filter_map(|name| fields.remove_entry(*name))
        .collect();
    read(&Value::Object(own))
}

/// Reads `T` from the object `fields`, all of whose fields must be `T`'s.
pub(super) fn read_all<T: DeserializeOwned>(mut fields: Map<String, Value>) -> Result<T> {
    let value = take(&mut fields)?;
    refuse_rest(&fields)?;
    Ok(value)
}

/// Refuses the fields left in an object once every type it holds has
/// taken its own.
pub(super) fn refuse_rest(fields: &Map<String, Value>) -> Result<()> {
    if fields.is_empty() {
        return Ok(());
    }
    let unknown: Vec<String> = fields.keys().map(|key| format!("`{key}`")).collect();
    Err(Error::new(format!("unknown field {}", unknown.join(", "))))
}

/// Reads `T`, into which `P` is flattened (`#[serde(flatten)]`), from the
/// object `fields`. serde reads a flattened part from a buffer, where an
/// error loses its path, so `P` is first read on its own fields: an error
/// in one of them then names it.
pub(super) fn read_flattened<P, T>(fields: Map<String, Value>) -> Result<T>
where
    P: DeserializeOwned,
    T: DeserializeOwned,
{
    take::<P>(&mut fields.clone())?;
    read(&Value::Object(fields))
}

/// [`read_flattened`] for a nested object (`deserialize_with`); an error
/// names the path within it.
pub(super) fn flattened<'de, D, P, T>(deserializer: D) -> std::result::Result<T, D::Error>
where
    D: Deserializer<'de>,
    P: DeserializeOwned,
    T: DeserializeOwned,
{
    let fields = Map::deserialize(deserializer)?;
    read_flattened::<P, T>(fields).map_err(|e| de::Error::custom(e.message()))
}

/// Reads an optional field that must be given (`deserialize_with`):
/// missing, it is an error rather than `None`.
pub(super) fn given<'de, D, T>(deserializer: D) -> std::result::Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// The JSON names of the fields of the derived struct `T`, as its
/// `Deserialize` lists them to the deserializer. (serde has no other way to
/// ask; a struct with a flattened field lists none.)
fn field_names<T: DeserializeOwned>() -> &'static [&'static str] {
    /// A deserializer that only records the field names a struct asks for.
    struct Probe(&'static [&'static str]);

    impl<'de> Deserializer<'de> for &mut Probe {
        type Error = de::value::Error;

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            fields: &'static [&'static str],
            _visitor: V,
        ) -> std::result::Result<V::Value, Self::Error> {
            self.0 = fields;
            Err(de::Error::custom("only the field names were wanted"))
        }

        fn deserialize_any<V: Visitor<'de>>(
            self,
            _visitor: V,
        ) -> std::result::Result<V::Value, Self::Error> {
            Err(de::Error::custom("not a struct"))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
            bytes byte_buf option unit unit_struct newtype_struct seq tuple
            tuple_struct map enum identifier ignored_any
        }
    }

    let mut probe = Probe(&[]);
    // The probe always fails, once it has the names.
    let _ = T::deserialize(&mut probe);
    probe.0
}

/// A byte string as lowercase hex (`with = "json::hex"`): a `Vec<u8>` of
/// any length, or an array of exactly its length.
pub(super) mod hex {
    use serde::{Deserialize, Deserializer, Serializer, de};

    use crate::Result;

    /// A byte string that can be read from hex.
    pub(crate) trait FromHex: Sized {
        /// Decodes `text`, refusing a wrong length.
        fn from_hex(text: &str) -> Result<Self>;
    }

    impl FromHex for Vec<u8> {
        fn from_hex(text: &str) -> Result<Self> {
            crate::hex::decode(text)
        }
    }

    impl<const N: usize> FromHex for [u8; N] {
        fn from_hex(text: &str) -> Result<Self> {
            crate::hex::decode_array(text)
        }
    }

    pub(crate) fn serialize<S: Serializer>(
        bytes: &impl AsRef<[u8]>,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(&crate::hex::encode(bytes.as_ref()))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>, B: FromHex>(
        deserializer: D,
    ) -> std::result::Result<B, D::Error> {
        let text = String::deserialize(deserializer)?;
        B::from_hex(&text).map_err(|e| de::Error::custom(e.message()))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Head {
        name: String,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Body {
        #[serde(rename = "type")]
        kind: u8,
        extra: Option<u8>,
    }

    fn object(value: Value) -> Map<String, Value> {
        let Value::Object(fields) = value else {
            panic!("not an object: {value}");
        };
        fields
    }

    #[test]
    fn an_object_splits_among_its_types() {
        let mut fields = object(json!({"name": "x", "type": 3, "z": 0}));
        let head: Head = take(&mut fields).unwrap();
        assert_eq!(head.name, "x");
        let body: Body = take(&mut fields).unwrap();
        let expected = Body {
            kind: 3,
            extra: None,
        };
        assert_eq!(body, expected);
        // What no type took is left, and refused.
        assert_eq!(Value::Object(fields.clone()), json!({"z": 0}));
        assert_eq!(
            refuse_rest(&fields).unwrap_err().message(),
            "unknown field `z`"
        );
        let err = read_all::<Head>(object(json!({"name": "x", "a": 0, "b": 1}))).unwrap_err();
        assert_eq!(err.message(), "unknown field `a`, `b`");

        let err = take::<Body>(&mut object(json!({"name": "x"}))).unwrap_err();
        assert_eq!(err.message(), "missing field `type`");
        let err = take::<Body>(&mut object(json!({"type": -3}))).unwrap_err();
        assert!(err.message().starts_with("type: invalid value"), "{err}");
    }

    #[test]
    fn twins_are_checked_removed_and_written_back() {
        let written = json!({
            "sequence": 5, "sequence_hex": "0x0000000000000005", "sequence_bytes": 1,
            "inner": [{"protocol_id": 1, "protocol_id_hex": "0x0000000000000001"}],
            "user_data_hex": "", "user_data_recipe": "zeros",
        });
        let mut value = written.clone();
        strip(&mut value, "").unwrap();
        let read = json!({
            "sequence": 5, "sequence_bytes": 1, "inner": [{"protocol_id": 1}], "user_data_hex": "",
        });
        assert_eq!(value, read);
        add_twins(&mut value);
        let mut expected = written;
        expected.as_object_mut().unwrap().remove("user_data_recipe");
        assert_eq!(value, expected);

        let mut value =
            json!({"inner": [{"protocol_id": 1, "protocol_id_hex": "0x0000000000000002"}]});
        assert_eq!(
            strip(&mut value, "top").unwrap_err().message(),
            "top.inner[0]: protocol_id_hex is \"0x0000000000000002\" but protocol_id is 1 \
             (0x0000000000000001)"
        );
        // A twin may be null; without its value, it is refused, and so is a
        // recipe without its byte string.
        let mut value = json!({"sequence": 5, "sequence_hex": null});
        strip(&mut value, "").unwrap();
        assert_eq!(value, json!({"sequence": 5}));
        let mut value = json!({"sequence": 5, "sequence_hex": 5});
        let err = strip(&mut value, "").unwrap_err();
        assert_eq!(
            err.message(),
            "sequence_hex: invalid type: integer `5`, expected a string"
        );
        let mut value = json!({"sequence_hex": "0x0000000000000005"});
        let err = strip(&mut value, "").unwrap_err();
        assert_eq!(err.message(), "sequence_hex is given without sequence");
        let mut value = json!({"payload_recipe": ""});
        let err = strip(&mut value, "").unwrap_err();
        assert_eq!(err.message(), "payload_recipe is given without payload_hex");
    }
}
