//! Collecting every mismatch between a vector and its entry, rather than
//! stopping at the first.

use std::fmt::{Debug, Display};

use crate::{Error, Result, VectorSet, hex};

/// Collects mismatches.
#[derive(Default)]
pub(super) struct Checker {
    problems: Vec<String>,
}

impl Checker {
    pub(super) fn fail(&mut self, problem: impl Into<String>) {
        self.problems.push(problem.into());
    }

    pub(super) fn eq<T: PartialEq + Debug>(&mut self, what: impl Display, got: T, want: T) {
        if got != want {
            self.fail(format!("{what}: got {got:?}, manifest says {want:?}"));
        }
    }

    pub(super) fn bytes(&mut self, what: impl Display, got: &[u8], want: &[u8]) {
        if got == want {
            return;
        }
        let first = got
            .iter()
            .zip(want)
            .position(|(a, b)| a != b)
            .unwrap_or(got.len().min(want.len()));
        let excerpt = |b: &[u8]| hex::encode(&b[first.min(b.len())..(first + 16).min(b.len())]);
        self.fail(format!(
            "{what}: {} bytes vs {} expected, first difference at offset {first}: got {}.. expected {}..",
            got.len(),
            want.len(),
            excerpt(got),
            excerpt(want)
        ));
    }

    pub(super) fn zero(&mut self, what: impl Display, bytes: &[u8]) {
        if let Some(offset) = bytes.iter().position(|&b| b != 0) {
            self.fail(format!("{what}: non-zero padding byte at offset {offset}"));
        }
    }

    /// A slice of `bytes`, or a recorded problem when it is out of range.
    pub(super) fn slice<'b>(
        &mut self,
        what: impl Display,
        bytes: &'b [u8],
        range: std::ops::Range<usize>,
    ) -> Option<&'b [u8]> {
        let slice = bytes.get(range.clone());
        if slice.is_none() {
            self.fail(format!(
                "{what}: range {range:?} is outside the {} bytes",
                bytes.len()
            ));
        }
        slice
    }

    pub(super) fn other_file(&mut self, set: &VectorSet, name: &str) -> Option<Vec<u8>> {
        match set.read_named(name) {
            Ok(bytes) => Some(bytes),
            Err(e) => {
                self.fail(format!("referenced vector {name:?}: {e}"));
                None
            }
        }
    }

    pub(super) fn finish(self, name: &str) -> Result<()> {
        if self.problems.is_empty() {
            Ok(())
        } else {
            Err(Error::new(format!(
                "{name}: {} mismatch(es):\n  {}",
                self.problems.len(),
                self.problems.join("\n  ")
            )))
        }
    }
}
