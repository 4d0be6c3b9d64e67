//! The C API's constants and types, with the names, values and layouts of
//! `netcode.h`: what a C program compiled against the header sees in
//! memory. Nothing here has behaviour, and nothing here imports from the
//! rest of the crate: every other module builds on these definitions. The
//! configs' defaults live with the functions that write them
//! (`netcode_default_client_config`, `netcode_default_server_config`), an
//! address's conversions and text with `address`.
#![allow(non_camel_case_types)]

use std::ffi::{CStr, c_char, c_int, c_void};

/// The library's version, as a C string.
pub const NETCODE_VERSION_FULL: &CStr = c"1.4.8";
/// The major version.
pub const NETCODE_VERSION_MAJOR: c_int = 1;
/// The minor version.
pub const NETCODE_VERSION_MINOR: c_int = 4;
/// The patch version.
pub const NETCODE_VERSION_PATCH: c_int = 8;

/// `NETCODE_PLATFORM` on Windows.
pub const NETCODE_PLATFORM_WINDOWS: c_int = 1;
/// `NETCODE_PLATFORM` on macOS.
pub const NETCODE_PLATFORM_MAC: c_int = 2;
/// `NETCODE_PLATFORM` elsewhere.
pub const NETCODE_PLATFORM_UNIX: c_int = 3;
/// The platform this library was built for.
pub const NETCODE_PLATFORM: c_int = if cfg!(windows) {
    NETCODE_PLATFORM_WINDOWS
} else if cfg!(target_os = "macos") {
    NETCODE_PLATFORM_MAC
} else {
    NETCODE_PLATFORM_UNIX
};

/// Bytes of a connect token.
pub const NETCODE_CONNECT_TOKEN_BYTES: c_int = 2048;
/// Bytes of a key.
pub const NETCODE_KEY_BYTES: c_int = 32;
/// Bytes of an AEAD tag.
pub const NETCODE_MAC_BYTES: c_int = 16;
/// Bytes of a token's user data.
pub const NETCODE_USER_DATA_BYTES: c_int = 256;
/// Most server addresses in one connect token.
pub const NETCODE_MAX_SERVERS_PER_CONNECT: c_int = 32;

/// Client state: the connect token expired before a connection was made.
pub const NETCODE_CLIENT_STATE_CONNECT_TOKEN_EXPIRED: c_int = -6;
/// Client state: the connect token could not be read.
pub const NETCODE_CLIENT_STATE_INVALID_CONNECT_TOKEN: c_int = -5;
/// Client state: the connected server went silent.
pub const NETCODE_CLIENT_STATE_CONNECTION_TIMED_OUT: c_int = -4;
/// Client state: no server answered the challenge response.
pub const NETCODE_CLIENT_STATE_CONNECTION_RESPONSE_TIMED_OUT: c_int = -3;
/// Client state: no server answered the connection request.
pub const NETCODE_CLIENT_STATE_CONNECTION_REQUEST_TIMED_OUT: c_int = -2;
/// Client state: every server that answered was full.
pub const NETCODE_CLIENT_STATE_CONNECTION_DENIED: c_int = -1;
/// Client state: not connected.
pub const NETCODE_CLIENT_STATE_DISCONNECTED: c_int = 0;
/// Client state: sending connection requests.
pub const NETCODE_CLIENT_STATE_SENDING_CONNECTION_REQUEST: c_int = 1;
/// Client state: sending challenge responses.
pub const NETCODE_CLIENT_STATE_SENDING_CONNECTION_RESPONSE: c_int = 2;
/// Client state: connected.
pub const NETCODE_CLIENT_STATE_CONNECTED: c_int = 3;

/// Why a server slot was last vacated: never vacated since start or connect.
pub const NETCODE_SERVER_CLIENT_DISCONNECT_REASON_NONE: c_int = 0;
/// Why a server slot was last vacated: the client went silent.
pub const NETCODE_SERVER_CLIENT_DISCONNECT_REASON_TIMED_OUT: c_int = 1;
/// Why a server slot was last vacated: the client disconnected.
pub const NETCODE_SERVER_CLIENT_DISCONNECT_REASON_CLIENT_DISCONNECT: c_int = 2;
/// Why a server slot was last vacated: the server disconnected it.
pub const NETCODE_SERVER_CLIENT_DISCONNECT_REASON_SERVER_DISCONNECT: c_int = 3;

/// Client create error: none (the last create succeeded).
pub const NETCODE_CLIENT_CREATE_ERROR_NONE: c_int = 0;
/// Client create error: the first address did not parse.
pub const NETCODE_CLIENT_CREATE_ERROR_PARSE_ADDRESS_FAILED: c_int = 1;
/// Client create error: the second address did not parse.
pub const NETCODE_CLIENT_CREATE_ERROR_PARSE_ADDRESS2_FAILED: c_int = 2;
/// Client create error: the network simulator needs a port (never
/// returned here: the simulator is not supported).
pub const NETCODE_CLIENT_CREATE_ERROR_SIMULATOR_REQUIRES_PORT: c_int = 3;
/// Client create error: the IPv4 socket could not be created or bound.
pub const NETCODE_CLIENT_CREATE_ERROR_CREATE_SOCKET_IPV4_FAILED: c_int = 4;
/// Client create error: the IPv6 socket could not be created or bound.
pub const NETCODE_CLIENT_CREATE_ERROR_CREATE_SOCKET_IPV6_FAILED: c_int = 5;
/// Client create error: the client object could not be allocated.
pub const NETCODE_CLIENT_CREATE_ERROR_ALLOCATE_CLIENT_FAILED: c_int = 6;
/// Client create error: override mode without both override callbacks.
pub const NETCODE_CLIENT_CREATE_ERROR_MISSING_OVERRIDE_CALLBACK: c_int = 7;

/// Server create error: none (the last create succeeded).
pub const NETCODE_SERVER_CREATE_ERROR_NONE: c_int = 0;
/// Server create error: the first address did not parse.
pub const NETCODE_SERVER_CREATE_ERROR_PARSE_ADDRESS_FAILED: c_int = 1;
/// Server create error: the second address did not parse.
pub const NETCODE_SERVER_CREATE_ERROR_PARSE_ADDRESS2_FAILED: c_int = 2;
/// Server create error: the IPv4 socket could not be created.
pub const NETCODE_SERVER_CREATE_ERROR_CREATE_SOCKET_IPV4_FAILED: c_int = 3;
/// Server create error: the IPv6 socket could not be created.
pub const NETCODE_SERVER_CREATE_ERROR_CREATE_SOCKET_IPV6_FAILED: c_int = 4;
/// Server create error: the IPv4 socket could not be bound.
pub const NETCODE_SERVER_CREATE_ERROR_BIND_SOCKET_IPV4_FAILED: c_int = 5;
/// Server create error: the IPv6 socket could not be bound.
pub const NETCODE_SERVER_CREATE_ERROR_BIND_SOCKET_IPV6_FAILED: c_int = 6;
/// Server create error: the server object could not be allocated.
pub const NETCODE_SERVER_CREATE_ERROR_ALLOCATE_SERVER_FAILED: c_int = 7;
/// Server create error: override mode without both override callbacks.
pub const NETCODE_SERVER_CREATE_ERROR_MISSING_OVERRIDE_CALLBACK: c_int = 8;

/// Most slots a server opens.
pub const NETCODE_MAX_CLIENTS: c_int = 256;
/// Largest payload, in bytes.
pub const NETCODE_MAX_PACKET_SIZE: c_int = 1200;

/// The default `max_connect_token_lifetime` of a server config, in seconds.
pub const NETCODE_DEFAULT_MAX_CONNECT_TOKEN_LIFETIME: c_int = 30;

/// Log level: nothing.
pub const NETCODE_LOG_LEVEL_NONE: c_int = 0;
/// Log level: errors.
pub const NETCODE_LOG_LEVEL_ERROR: c_int = 1;
/// Log level: errors and lifecycle.
pub const NETCODE_LOG_LEVEL_INFO: c_int = 2;
/// Log level: everything.
pub const NETCODE_LOG_LEVEL_DEBUG: c_int = 3;

/// Success.
pub const NETCODE_OK: c_int = 1;
/// Failure.
pub const NETCODE_ERROR: c_int = 0;

/// Address type: none (a zeroed address).
pub const NETCODE_ADDRESS_NONE: u8 = 0;
/// Address type: IPv4.
pub const NETCODE_ADDRESS_IPV4: u8 = 1;
/// Address type: IPv6.
pub const NETCODE_ADDRESS_IPV6: u8 = 2;

/// The bytes of an address: four octets, or eight 16-bit groups in host
/// byte order.
#[repr(C)]
#[derive(Clone, Copy)]
pub union netcode_address_data {
    /// An IPv4 address's octets, in order.
    pub ipv4: [u8; 4],
    /// An IPv6 address's groups, each in host byte order.
    pub ipv6: [u16; 8],
}

/// `struct netcode_address_t`: an IPv4 or IPv6 address and port (20 bytes,
/// alignment 2).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct netcode_address_t {
    /// The address's bytes.
    pub data: netcode_address_data,
    /// The port, in host byte order.
    pub port: u16,
    /// [`NETCODE_ADDRESS_NONE`], [`NETCODE_ADDRESS_IPV4`] or
    /// [`NETCODE_ADDRESS_IPV6`] (`type` in C).
    pub type_: u8,
}

impl netcode_address_t {
    /// The zeroed address, of type NONE.
    pub const ZERO: Self = Self {
        data: netcode_address_data { ipv6: [0; 8] },
        port: 0,
        type_: NETCODE_ADDRESS_NONE,
    };
}

impl Default for netcode_address_t {
    fn default() -> Self {
        Self::ZERO
    }
}

/// `struct netcode_network_simulator_t`: the reference's test-only network
/// simulator, opaque here (not supported: a non-NULL pointer in a config is
/// logged and ignored).
#[repr(C)]
pub struct netcode_network_simulator_t {
    _opaque: [u8; 0],
}

/// `void * (*)(void * context, size_t bytes)`: an allocator callback.
pub type AllocateFunction = unsafe extern "C" fn(*mut c_void, usize) -> *mut c_void;
/// `void (*)(void * context, void * pointer)`: a deallocator callback.
pub type FreeFunction = unsafe extern "C" fn(*mut c_void, *mut c_void);
/// `void (*)(void * context, int previous, int current)`: a client's state
/// change.
pub type StateChangeCallback = unsafe extern "C" fn(*mut c_void, c_int, c_int);
/// `void (*)(void * context, int client_index, int connected)`: a server
/// slot connected (1) or disconnected (0).
pub type ConnectDisconnectCallback = unsafe extern "C" fn(*mut c_void, c_int, c_int);
/// `void (*)(void * context, int client_index, const uint8_t * data, int
/// bytes, uint64_t sequence)`: a payload for the other side of a loopback
/// connection.
pub type SendLoopbackPacketCallback =
    unsafe extern "C" fn(*mut c_void, c_int, *const u8, c_int, u64);
/// `void (*)(void * context, struct netcode_address_t * to, const uint8_t *
/// data, int bytes)`: override mode's send.
pub type SendPacketOverride =
    unsafe extern "C" fn(*mut c_void, *mut netcode_address_t, *const u8, c_int);
/// `int (*)(void * context, struct netcode_address_t * from, uint8_t *
/// buffer, int max_bytes)`: override mode's receive; the bytes written, 0
/// when nothing waits.
pub type ReceivePacketOverride =
    unsafe extern "C" fn(*mut c_void, *mut netcode_address_t, *mut u8, c_int) -> c_int;
/// `int (*)(const char * format, ...)`: the log sink.
pub type PrintfFunction = unsafe extern "C" fn(*const c_char, ...) -> c_int;
/// `void (*)(const char * condition, const char * function, const char *
/// file, int line)`: the assert handler.
pub type AssertFunction = unsafe extern "C" fn(*const c_char, *const c_char, *const c_char, c_int);

/// `struct netcode_client_config_t`, fields in the header's order.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct netcode_client_config_t {
    /// Passed to the allocator callbacks.
    pub allocator_context: *mut c_void,
    /// Allocates the client object and received payloads (NULL: malloc).
    pub allocate_function: Option<AllocateFunction>,
    /// Frees what `allocate_function` returned (NULL: free).
    pub free_function: Option<FreeFunction>,
    /// Not supported: logged and ignored when non-NULL.
    pub network_simulator: *mut netcode_network_simulator_t,
    /// Passed to the callbacks below.
    pub callback_context: *mut c_void,
    /// Called on every state change.
    pub state_change_callback: Option<StateChangeCallback>,
    /// Called with each payload a loopback client sends.
    pub send_loopback_packet_callback: Option<SendLoopbackPacketCallback>,
    /// Non-zero: no socket; datagrams go through the two overrides.
    pub override_send_and_receive: c_int,
    /// Override mode's send.
    pub send_packet_override: Option<SendPacketOverride>,
    /// Override mode's receive.
    pub receive_packet_override: Option<ReceivePacketOverride>,
}

/// `struct netcode_server_config_t`, fields in the header's order
/// (`max_connect_token_lifetime`, added in 1.4.5, last).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct netcode_server_config_t {
    /// Identifies the game; tokens for another protocol are refused.
    pub protocol_id: u64,
    /// The key shared with the backend that issues connect tokens.
    pub private_key: [u8; 32],
    /// Passed to the allocator callbacks.
    pub allocator_context: *mut c_void,
    /// Allocates the server object and received payloads (NULL: malloc).
    pub allocate_function: Option<AllocateFunction>,
    /// Frees what `allocate_function` returned (NULL: free).
    pub free_function: Option<FreeFunction>,
    /// Not supported: logged and ignored when non-NULL.
    pub network_simulator: *mut netcode_network_simulator_t,
    /// Passed to the callbacks below.
    pub callback_context: *mut c_void,
    /// Called when a slot connects (1) or disconnects (0).
    pub connect_disconnect_callback: Option<ConnectDisconnectCallback>,
    /// Called with each payload sent to a loopback client.
    pub send_loopback_packet_callback: Option<SendLoopbackPacketCallback>,
    /// Non-zero: no socket; datagrams go through the two overrides.
    pub override_send_and_receive: c_int,
    /// Override mode's send.
    pub send_packet_override: Option<SendPacketOverride>,
    /// Override mode's receive.
    pub receive_packet_override: Option<ReceivePacketOverride>,
    /// The longest lifetime, in seconds, of the tokens the backend issues
    /// (the restart rule's window).
    pub max_connect_token_lifetime: c_int,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, offset_of, size_of};

    #[test]
    fn layouts_are_the_headers() {
        assert_eq!(size_of::<netcode_address_t>(), 20);
        assert_eq!(align_of::<netcode_address_t>(), 2);
        assert_eq!(offset_of!(netcode_address_t, port), 16);
        assert_eq!(offset_of!(netcode_address_t, type_), 18);

        let p = size_of::<*const u8>();
        assert_eq!(size_of::<netcode_client_config_t>(), 10 * p);
        assert_eq!(
            offset_of!(netcode_client_config_t, override_send_and_receive),
            7 * p
        );
        assert_eq!(
            offset_of!(netcode_client_config_t, receive_packet_override),
            9 * p
        );

        assert_eq!(offset_of!(netcode_server_config_t, private_key), 8);
        assert_eq!(offset_of!(netcode_server_config_t, allocator_context), 40);
        assert_eq!(
            offset_of!(netcode_server_config_t, override_send_and_receive),
            40 + 7 * p
        );
        assert_eq!(
            offset_of!(netcode_server_config_t, max_connect_token_lifetime),
            40 + 10 * p
        );
    }
}
