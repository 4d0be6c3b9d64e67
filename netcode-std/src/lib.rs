//! # netcode-std
//!
//! netcode 1.02 on the standard library: operating-system randomness, the
//! wall clock for connect token timestamps, and (to come) `std::net` UDP
//! client and server transports around the sans-IO core in
//! [`netcode_proto`].
//!
//! What is here today is what a web backend needs to issue connect tokens:
//! [`generate_connect_token`] fills in the create timestamp from the system
//! clock and draws the nonce and keys from the operating system's CSPRNG.
#![forbid(unsafe_code)]

mod random;
mod time;
mod token;

pub use netcode_proto as proto;
pub use random::{OsRandom, RandomError, os_random, random_key};
pub use time::unix_time;
pub use token::{TokenRequest, generate_connect_token};
