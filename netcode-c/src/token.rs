//! Connect tokens: `netcode_generate_connect_token`, what a web backend
//! calls to issue a client its 2048-byte token.

use std::ffi::{c_char, c_int};
use std::net::SocketAddr;

use netcode_std::ConnectTokenBuilder;
use netcode_std::proto::Key;
use netcode_std::proto::constants::{
    CONNECT_TOKEN_BYTES, KEY_BYTES, MAX_SERVERS_PER_CONNECT, USER_DATA_BYTES,
};

use crate::abi::{NETCODE_ERROR, NETCODE_OK};
use crate::address;
use crate::boundary::{self, guard};
use crate::logging;

/// The name in this module's log lines.
const FUNCTION: &str = "netcode_generate_connect_token";

/// Writes a connect token for `client_id` into `connect_token` (2048
/// bytes): `num_server_addresses` (1 to 32) public addresses the client
/// tries and the matching internal addresses the servers know themselves
/// by, the expiry (`expire_seconds` from now; negative: never) and timeout
/// (seconds; negative: none), the user data (256 bytes; NULL: zeros),
/// sealed with `private_key` (32 bytes) for `protocol_id`. Keys and nonce
/// come from the operating system's generator. `NETCODE_OK`, or
/// `NETCODE_ERROR` (logged) for a count out of range, a NULL list, key or
/// output, or an address that does not parse.
///
/// # Safety
///
/// The two lists are NULL or hold `num_server_addresses` pointers, each
/// NULL or a C string; `private_key` is NULL or 32 readable bytes,
/// `user_data` NULL or 256 readable bytes, `connect_token` NULL or 2048
/// writable bytes.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn netcode_generate_connect_token(
    num_server_addresses: c_int,
    public_server_addresses: *const *const c_char,
    internal_server_addresses: *const *const c_char,
    expire_seconds: c_int,
    timeout_seconds: c_int,
    client_id: u64,
    protocol_id: u64,
    private_key: *const u8,
    user_data: *mut u8,
    connect_token: *mut u8,
) -> c_int {
    guard(FUNCTION, NETCODE_ERROR, || {
        let count = match usize::try_from(num_server_addresses) {
            Ok(n) if (1..=MAX_SERVERS_PER_CONNECT).contains(&n) => n,
            _ => {
                logging::error(format_args!(
                    "{FUNCTION}: {num_server_addresses} server addresses is not 1 to {MAX_SERVERS_PER_CONNECT}"
                ));
                return NETCODE_ERROR;
            }
        };
        if connect_token.is_null() {
            logging::error(format_args!("{FUNCTION}: the output buffer is NULL"));
            return NETCODE_ERROR;
        }
        // The same list for both (as most callers pass) is read once.
        let same = internal_server_addresses == public_server_addresses;
        // SAFETY: `addresses` refuses a NULL list; otherwise each list holds
        // `count` (1..=32, checked) pointers, each NULL (refused) or a
        // string read up to its NUL or 255 bytes (this function's contract).
        let Some(public) = (unsafe { addresses(public_server_addresses, count, "public") }) else {
            return NETCODE_ERROR;
        };
        let internal = if same {
            Some(public.clone())
        } else {
            // SAFETY: as for the public list.
            unsafe { addresses(internal_server_addresses, count, "internal") }
        };
        let Some(internal) = internal else {
            return NETCODE_ERROR;
        };
        // SAFETY: NULL or 32 readable bytes.
        let Some(key) = (unsafe {
            boundary::array::<KEY_BYTES>(
                private_key,
                "netcode_generate_connect_token: the private key",
            )
        }) else {
            return NETCODE_ERROR;
        };
        let key = Key::from_bytes(*key);
        let user_data = if user_data.is_null() {
            [0; USER_DATA_BYTES]
        } else {
            // SAFETY: not NULL (checked), so 256 readable bytes (this
            // function's contract); [u8; 256] has alignment 1; copied.
            unsafe { user_data.cast::<[u8; USER_DATA_BYTES]>().read() }
        };
        let token = ConnectTokenBuilder::new(protocol_id, &key, client_id)
            .server_addresses(public)
            .internal_server_addresses(internal)
            .expire_seconds(i64::from(expire_seconds))
            .timeout_seconds(timeout_seconds)
            .user_data(&user_data)
            .generate();
        match token {
            Ok(token) => {
                // SAFETY: not NULL (checked above), so 2048 writable bytes
                // (this function's contract); `token` is our own 2048-byte
                // array, which C's buffer cannot overlap.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        token.as_ptr(),
                        connect_token,
                        CONNECT_TOKEN_BYTES,
                    )
                };
                NETCODE_OK
            }
            Err(e) => {
                logging::error(format_args!("{FUNCTION}: {e}"));
                NETCODE_ERROR
            }
        }
    })
}

/// The `count` addresses of a list; `None` (logged, naming `which` list)
/// for a NULL list or an entry that is NULL or not an address.
///
/// # Safety
///
/// `list` is NULL or holds `count` pointers, each NULL or a C string.
unsafe fn addresses(
    list: *const *const c_char,
    count: usize,
    which: &str,
) -> Option<Vec<SocketAddr>> {
    if list.is_null() {
        logging::error(format_args!("{FUNCTION}: the {which} address list is NULL"));
        return None;
    }
    (0..count)
        .map(|i| {
            // SAFETY: the list holds `count` readable pointers (read
            // unaligned: its alignment is not checked).
            let text = unsafe { list.add(i).read_unaligned() };
            // SAFETY: NULL or a C string, the caller's promise.
            let parsed = unsafe { address::parse(text, FUNCTION) };
            if parsed.is_none() {
                logging::error(format_args!(
                    "{FUNCTION}: {which} address {i} is not an address"
                ));
            }
            parsed
        })
        .collect()
}
