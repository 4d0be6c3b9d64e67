//! Randomness from the operating system.

use netcode_proto::Key;
use netcode_proto::constants::KEY_BYTES;

/// The operating system could not supply random bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("operating system randomness unavailable: {0}")]
pub struct RandomError(#[source] getrandom::Error);

/// The operating system's cryptographically secure generator, as the
/// `rand_core::CryptoRng` the protocol core asks for.
///
/// If the operating system ever fails to deliver randomness, this panics
/// rather than hand out predictable keys: use [`generate_key`] where a typed
/// error is wanted instead.
pub type OsRandom = getrandom::rand_core::UnwrapErr<getrandom::SysRng>;

/// The operating system's generator, ready to pass to the protocol core.
pub fn os_random() -> OsRandom {
    getrandom::rand_core::UnwrapErr(getrandom::SysRng)
}

/// A fresh random key from the operating system, for example the private
/// key a web backend and its dedicated servers share. Keep it out of
/// client executables.
pub fn generate_key() -> Result<Key, RandomError> {
    let mut bytes = [0u8; KEY_BYTES];
    getrandom::fill(&mut bytes).map_err(RandomError)?;
    Ok(Key::from_bytes(bytes))
}

/// Fills `bytes` from the operating system's CSPRNG (the C library's
/// `netcode_random_bytes`), for example a client id or user data.
pub fn random_bytes(bytes: &mut [u8]) -> Result<(), RandomError> {
    getrandom::fill(bytes).map_err(RandomError)
}

/// A random client id, for tests and tools: a real backend uses the id of
/// the account it authenticated, unique among the connected clients.
pub fn random_client_id() -> Result<u64, RandomError> {
    let mut bytes = [0u8; 8];
    random_bytes(&mut bytes)?;
    Ok(u64::from_le_bytes(bytes))
}
