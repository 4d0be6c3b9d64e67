//! The manifest's JSON read strictly: an object reader that tracks which
//! fields were read, so that a field nobody read is an error, and exact
//! integer and hex readers (STANDARD.md: none; the manifest's own format).

use std::cell::RefCell;
use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::{Error, Result, hex};

pub(super) fn number_array<T: TryFrom<u64>, const N: usize>(
    values: &[Value],
    what: &str,
) -> Result<[T; N]> {
    if values.len() != N {
        return Err(Error::new(format!(
            "{what} has {} numbers, expected {N}",
            values.len()
        )));
    }
    let mut out = Vec::with_capacity(N);
    for value in values {
        let number = value
            .as_u64()
            .and_then(|n| T::try_from(n).ok())
            .ok_or_else(|| Error::new(format!("{what} holds {value}, not a small integer")))?;
        out.push(number);
    }
    out.try_into()
        .map_err(|_| Error::new(format!("{what} has the wrong length")))
}

/// A JSON object whose reads are tracked, so that [`Obj::finish`] can refuse
/// fields nobody read.
pub(super) struct Obj<'a> {
    map: &'a Map<String, Value>,
    what: &'static str,
    used: RefCell<BTreeSet<&'a str>>,
}

impl<'a> Obj<'a> {
    pub(super) fn new(value: &'a Value, what: &'static str) -> Result<Self> {
        let map = value
            .as_object()
            .ok_or_else(|| Error::new(format!("{what} is not a JSON object")))?;
        Ok(Self {
            map,
            what,
            used: RefCell::new(BTreeSet::new()),
        })
    }

    pub(super) fn keys(&self) -> impl Iterator<Item = &'a str> + use<'a> {
        self.map.keys().map(String::as_str)
    }

    fn mark(&self, key: &str) {
        if let Some((k, _)) = self.map.get_key_value(key) {
            self.used.borrow_mut().insert(k.as_str());
        }
    }

    fn get(&self, key: &str) -> Result<&'a Value> {
        self.mark(key);
        self.map
            .get(key)
            .ok_or_else(|| Error::new(format!("{} has no field {key:?}", self.what)))
    }

    /// Marks informational fields as read, whether present or not.
    pub(super) fn ignore(&self, keys: &[&str]) {
        for key in keys {
            self.mark(key);
        }
    }

    pub(super) fn str(&self, key: &str) -> Result<&'a str> {
        self.get(key)?
            .as_str()
            .ok_or_else(|| Error::new(format!("{key} is not a string")))
    }

    pub(super) fn bool(&self, key: &str) -> Result<bool> {
        self.get(key)?
            .as_bool()
            .ok_or_else(|| Error::new(format!("{key} is not a boolean")))
    }

    /// An exact unsigned 64-bit integer. When the `<key>_hex` twin exists it
    /// must be the same value as a `0x`-prefixed 16-digit numeral.
    pub(super) fn u64(&self, key: &str) -> Result<u64> {
        let value = self.get(key)?;
        let number = value
            .as_u64()
            .ok_or_else(|| Error::new(format!("{key} is {value}, not an exact u64")))?;
        let twin = format!("{key}_hex");
        if self.map.contains_key(&twin) {
            let text = self.str(&twin)?;
            let expected = format!("{number:#018x}");
            if text != expected {
                return Err(Error::new(format!(
                    "{twin} is {text:?} but {key} is {number} ({expected})"
                )));
            }
        }
        Ok(number)
    }

    pub(super) fn small<T: TryFrom<u64>>(&self, key: &str, type_name: &str) -> Result<T> {
        let number = self.u64(key)?;
        T::try_from(number)
            .map_err(|_| Error::new(format!("{key} is {number}, too large for {type_name}")))
    }

    pub(super) fn usize(&self, key: &str) -> Result<usize> {
        self.small(key, "usize")
    }

    pub(super) fn u32(&self, key: &str) -> Result<u32> {
        self.small(key, "u32")
    }

    pub(super) fn u16(&self, key: &str) -> Result<u16> {
        self.small(key, "u16")
    }

    pub(super) fn u8(&self, key: &str) -> Result<u8> {
        self.small(key, "u8")
    }

    pub(super) fn i32(&self, key: &str) -> Result<i32> {
        let value = self.get(key)?;
        value
            .as_i64()
            .and_then(|n| i32::try_from(n).ok())
            .ok_or_else(|| Error::new(format!("{key} is {value}, not a signed 32-bit integer")))
    }

    /// A byte string from a `*_hex` field.
    pub(super) fn hex(&self, key: &str) -> Result<Vec<u8>> {
        hex::decode(self.str(key)?).map_err(|e| e.context(key))
    }

    pub(super) fn hex_array<const N: usize>(&self, key: &str) -> Result<[u8; N]> {
        hex::decode_array(self.str(key)?).map_err(|e| e.context(key))
    }

    pub(super) fn obj(&self, key: &str) -> Result<Obj<'a>> {
        Obj::new(self.get(key)?, "object").map_err(|e| e.context(key))
    }

    pub(super) fn array(&self, key: &str) -> Result<&'a Vec<Value>> {
        self.get(key)?
            .as_array()
            .ok_or_else(|| Error::new(format!("{key} is not an array")))
    }

    /// Fails when the object has a field that was never read.
    pub(super) fn finish(&self) -> Result<()> {
        let used = self.used.borrow();
        let unknown: Vec<&str> = self
            .map
            .keys()
            .map(String::as_str)
            .filter(|k| !used.contains(k))
            .collect();
        if unknown.is_empty() {
            Ok(())
        } else {
            Err(Error::new(format!(
                "{} has fields this parser does not check: {unknown:?}",
                self.what
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn u64_is_exact_and_checked_against_its_hex_twin() {
        let value: Value = serde_json::from_str(
            r#"{"a": 18446744073709551615, "a_hex": "0xffffffffffffffff", "b": 1.5, "c": 2, "c_hex": "0x0000000000000003"}"#,
        )
        .unwrap();
        let obj = Obj::new(&value, "test").unwrap();
        assert_eq!(obj.u64("a").unwrap(), u64::MAX);
        assert!(obj.u64("b").is_err());
        assert!(obj.u64("c").is_err());
    }

    #[test]
    fn timeout_is_signed_32_bit() {
        let value: Value =
            serde_json::from_str(r#"{"t": -1, "u": 2147483648, "v": -2147483648}"#).unwrap();
        let obj = Obj::new(&value, "test").unwrap();
        assert_eq!(obj.i32("t").unwrap(), -1);
        assert!(obj.i32("u").is_err());
        assert_eq!(obj.i32("v").unwrap(), i32::MIN);
    }
}
