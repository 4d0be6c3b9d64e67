//! The messages measured, as netcode encrypts them, and one operation on
//! each: payload packets of 100 and 1200 bytes (22 bytes of associated data:
//! version info, protocol id, prefix byte) and the private connect token
//! (1008 bytes sealed under XChaCha20-Poly1305 with 29 bytes of associated
//! data: version info, protocol id, expire timestamp).

use netcode_proto::crypto::sequence_nonce;

use crate::{Aead, Nonce, Tag};

/// Which construction a case uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Construction {
    /// ChaCha20-Poly1305 (IETF, 12-byte nonce): packets.
    Ietf,
    /// XChaCha20-Poly1305 (24-byte nonce): the private connect token.
    X,
}

/// Sealing or opening.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Encrypt in place, produce the tag.
    Seal,
    /// Check the tag, decrypt in place.
    Open,
}

/// One measured operation.
#[derive(Debug, Clone, Copy)]
pub struct Case {
    /// Its name on the command line and in the tables.
    pub name: &'static str,
    /// Seal or open.
    pub op: Op,
    /// IETF or XChaCha20.
    pub construction: Construction,
    /// Bytes encrypted.
    pub length: usize,
    /// Bytes of associated data.
    pub ad_length: usize,
}

/// Every case, in table order.
pub const CASES: [Case; 6] = [
    Case::packet("seal-100", Op::Seal, 100),
    Case::packet("open-100", Op::Open, 100),
    Case::packet("seal-1200", Op::Seal, 1200),
    Case::packet("open-1200", Op::Open, 1200),
    Case::token("seal-token", Op::Seal),
    Case::token("open-token", Op::Open),
];

impl Case {
    const fn packet(name: &'static str, op: Op, length: usize) -> Self {
        Self {
            name,
            op,
            construction: Construction::Ietf,
            length,
            ad_length: 22,
        }
    }

    const fn token(name: &'static str, op: Op) -> Self {
        Self {
            name,
            op,
            construction: Construction::X,
            length: 1008,
            ad_length: 29,
        }
    }

    /// The case called `name`.
    pub fn named(name: &str) -> Option<Case> {
        CASES.iter().copied().find(|case| case.name == name)
    }
}

/// The key every implementation is given.
pub const KEY: [u8; 32] = [0x5c; 32];

/// Inputs for one case on one implementation.
pub struct Fixture<'a> {
    aead: &'a dyn Aead,
    case: Case,
    nonce: Nonce,
    ad: Vec<u8>,
    /// The plaintext to seal, or the ciphertext to open.
    input: Vec<u8>,
    /// The tag of the ciphertext, for opening.
    tag: Tag,
}

impl<'a> Fixture<'a> {
    /// The inputs of `case`; the ciphertext to open is sealed by `aead`
    /// itself.
    pub fn new(aead: &'a dyn Aead, case: Case) -> Self {
        let mut fixture = Self {
            aead,
            case,
            nonce: match case.construction {
                Construction::Ietf => Nonce::Ietf(sequence_nonce(1000)),
                Construction::X => Nonce::X(core::array::from_fn(|i| (i * 11 + 1) as u8)),
            },
            ad: (0..case.ad_length).map(|i| i as u8 ^ 0x42).collect(),
            input: (0..case.length).map(|i| (i * 7 + 3) as u8).collect(),
            tag: [0; 16],
        };
        if case.op == Op::Open {
            let mut sealed = fixture.input.clone();
            fixture.tag = aead.seal(&fixture.nonce, &fixture.ad, &mut sealed);
            fixture.input = sealed;
        }
        fixture
    }

    /// The bytes the operation starts from: the plaintext of a seal, the
    /// ciphertext of an open. A seal may start from any bytes of the right
    /// length (its cost does not depend on them); an open needs these.
    pub fn input(&self) -> &[u8] {
        &self.input
    }

    /// The case's operation on `buffer`, once: the tag of a seal, or
    /// whether the open succeeded (as a tag of all ones or all zeros).
    #[inline]
    pub fn run(&self, buffer: &mut [u8]) -> Tag {
        match self.case.op {
            Op::Seal => self.aead.seal(&self.nonce, &self.ad, buffer),
            Op::Open => {
                let opened = self.aead.open(&self.nonce, &self.ad, buffer, &self.tag);
                [u8::from(opened.is_ok()); 16]
            }
        }
    }
}
