//! Addresses and connect tokens through the C API: parse / format round
//! trips by the reference's rules, equality, the tokens
//! `netcode_generate_connect_token` writes (read back by the protocol
//! core), and the arguments each refuses. No socket is involved.

use std::ffi::{CStr, CString, c_char};

use crate::common::logged;
use crate::globals::{capture_log, settings_changed};
use netcode::*;
use netcode_std::proto::ConnectToken;

/// Parses `text`; the result and the address.
fn parse(text: &str) -> (i32, netcode_address_t) {
    let text = CString::new(text).unwrap();
    let mut address = netcode_address_t::ZERO;
    address.port = 1234; // the parse zeroes it first
    // SAFETY: a C string and a writable address.
    let result = unsafe { netcode_parse_address(text.as_ptr(), &mut address) };
    (result, address)
}

/// The text of `address`.
fn format(mut address: netcode_address_t) -> String {
    let mut buffer = [0 as c_char; 256];
    // SAFETY: a readable address and a 256-byte buffer.
    let written = unsafe { netcode_address_to_string(&mut address, buffer.as_mut_ptr()) };
    assert_eq!(written, buffer.as_mut_ptr());
    // SAFETY: the library wrote a C string into the buffer.
    unsafe { CStr::from_ptr(buffer.as_ptr()) }
        .to_str()
        .unwrap()
        .to_owned()
}

#[test]
fn addresses_parse_and_format_as_the_reference() {
    let (ok, v4) = parse("127.0.0.1:40000");
    assert_eq!(ok, NETCODE_OK);
    assert_eq!(v4.type_, NETCODE_ADDRESS_IPV4);
    // SAFETY: an IPv4 address.
    assert_eq!(unsafe { v4.data.ipv4 }, [127, 0, 0, 1]);
    assert_eq!(v4.port, 40000);

    let (ok, v6) = parse("[::1]:40000");
    assert_eq!(ok, NETCODE_OK);
    assert_eq!(v6.type_, NETCODE_ADDRESS_IPV6);
    // SAFETY: an IPv6 address.
    assert_eq!(unsafe { v6.data.ipv6 }, [0, 0, 0, 0, 0, 0, 0, 1]);

    for text in [
        "127.0.0.1:40000",
        "10.0.0.1",
        "[::1]:40000",
        "::1",
        "fe80::202:b3ff:fe1e:8329",
        "[2001:db8::1]:5",
        "::ffff:1.2.3.4",
        "::1.2.3.4",
    ] {
        let (ok, address) = parse(text);
        assert_eq!(ok, NETCODE_OK, "{text}");
        assert_eq!(format(address), text, "round trip of {text}");
    }
    let (_, quirk) = parse("[1.2.3.4]:5");
    assert_eq!(format(quirk), "1.2.3.4:5", "the reference's quirk");
    let (_, quirk) = parse("::1:4000");
    assert_eq!((quirk.type_, quirk.port), (NETCODE_ADDRESS_IPV6, 0));

    for bad in [
        "",
        "127.1",
        "1.2.3.4:65536",
        "1.2.3.4:",
        "host:40000",
        "::1%eth0",
    ] {
        let (ok, address) = parse(bad);
        assert_eq!(ok, NETCODE_ERROR, "{bad:?}");
        assert_eq!(
            (address.type_, address.port),
            (NETCODE_ADDRESS_NONE, 0),
            "zeroed"
        );
    }
    assert_eq!(format(netcode_address_t::ZERO), "NONE");
}

#[test]
fn equality_needs_type_port_and_address() {
    let (_, mut a) = parse("127.0.0.1:40000");
    let (_, mut b) = parse("127.0.0.1:40000");
    let (_, mut other_port) = parse("127.0.0.1:40001");
    let (_, mut v6) = parse("[::1]:40000");
    let mut none = netcode_address_t::ZERO;
    let mut none2 = netcode_address_t::ZERO;
    // SAFETY: readable addresses, or NULL.
    unsafe {
        assert_eq!(netcode_address_equal(&mut a, &mut b), 1);
        assert_eq!(netcode_address_equal(&mut a, &mut other_port), 0);
        assert_eq!(netcode_address_equal(&mut a, &mut v6), 0);
        assert_eq!(netcode_address_equal(&mut v6, &mut v6.clone()), 1);
        assert_eq!(
            netcode_address_equal(&mut none, &mut none2),
            0,
            "NONE equals nothing"
        );
        assert_eq!(netcode_address_equal(&mut a, std::ptr::null_mut()), 0);
    }
}

#[test]
fn bad_address_arguments_are_refused() {
    let _settings = capture_log();
    let mut address = netcode_address_t::ZERO;
    let mut buffer = [0 as c_char; 256];
    // SAFETY: NULL or valid pointers; a string with no NUL in its first 255
    // bytes is read no further.
    unsafe {
        assert_eq!(
            netcode_parse_address(std::ptr::null(), &mut address),
            NETCODE_ERROR
        );
        assert_eq!(
            netcode_parse_address(c"127.0.0.1".as_ptr(), std::ptr::null_mut()),
            NETCODE_ERROR
        );
        let long = [b'1'; 255];
        assert_eq!(
            netcode_parse_address(long.as_ptr().cast(), &mut address),
            NETCODE_ERROR
        );
        assert!(netcode_address_to_string(&mut address, std::ptr::null_mut()).is_null());
        netcode_address_to_string(std::ptr::null_mut(), buffer.as_mut_ptr());
        assert_eq!(CStr::from_ptr(buffer.as_ptr()).to_str(), Ok("NONE"));
        let mut odd = netcode_address_t::ZERO;
        odd.type_ = 9;
        netcode_address_to_string(&mut odd, buffer.as_mut_ptr());
        assert_eq!(CStr::from_ptr(buffer.as_ptr()).to_str(), Ok("NONE"));
    }
    let lines = netcode::test_log::take();
    assert!(logged(&lines, "NULL"), "{lines:?}");
}

/// Generates a token; the result and the token.
fn generate(
    count: i32,
    public: &[&CStr],
    internal: &[&CStr],
    user_data: Option<&mut [u8; 256]>,
) -> (i32, [u8; 2048]) {
    let public: Vec<*const c_char> = public.iter().map(|s| s.as_ptr()).collect();
    let internal: Vec<*const c_char> = internal.iter().map(|s| s.as_ptr()).collect();
    let mut token = [0u8; 2048];
    let key = [7u8; 32];
    let user_data = user_data.map_or(std::ptr::null_mut(), |u| u.as_mut_ptr());
    // SAFETY: lists of `count` C strings (or fewer when the count is out of
    // range, which is refused before the lists are read), a 32-byte key,
    // 256 bytes of user data or NULL, a 2048-byte output.
    let result = unsafe {
        netcode_generate_connect_token(
            count,
            public.as_ptr(),
            internal.as_ptr(),
            30,
            5,
            42,
            0x1122_3344_5566_7788,
            key.as_ptr(),
            user_data,
            token.as_mut_ptr(),
        )
    };
    (result, token)
}

#[test]
fn tokens_read_back_with_their_addresses_and_settings() {
    let mut user_data = [9u8; 256];
    let (ok, token) = generate(
        2,
        &[c"127.0.0.1:40000", c"[::1]:40001"],
        &[c"10.0.0.1:40000", c"[fd00::1]:40001"],
        Some(&mut user_data),
    );
    assert_eq!(ok, NETCODE_OK);
    let token = ConnectToken::read(&token).unwrap();
    assert_eq!(token.protocol_id, 0x1122_3344_5566_7788);
    assert_eq!(
        token.server_addresses[..],
        [
            "127.0.0.1:40000".parse().unwrap(),
            "[::1]:40001".parse().unwrap()
        ]
    );
    assert_eq!(token.expire_timestamp - token.create_timestamp, 30);
    assert_eq!(token.timeout_seconds, 5);

    let (ok, _) = generate(1, &[c"127.0.0.1:40000"], &[c"127.0.0.1:40000"], None);
    assert_eq!(ok, NETCODE_OK, "NULL user data is zeros");
}

/// `netcode_generate_connect_token` for one server, with raw lists, key
/// and output; 30 s to expiry, a 5 s timeout, client and protocol id 1, no
/// user data.
///
/// # Safety
///
/// Each pointer is NULL or what the function reads or writes: a list of
/// one C string (or a NULL entry), 32 bytes of key, 2048 writable bytes.
unsafe fn generate_raw(
    public: *const *const c_char,
    internal: *const *const c_char,
    key: *const u8,
    token: *mut u8,
) -> i32 {
    // SAFETY: as the caller promises.
    unsafe {
        netcode_generate_connect_token(
            1,
            public,
            internal,
            30,
            5,
            1,
            1,
            key,
            std::ptr::null_mut(),
            token,
        )
    }
}

#[test]
fn token_arguments_out_of_range_are_refused() {
    let _settings = capture_log();
    let one = [c"127.0.0.1:40000"];
    assert_eq!(generate(0, &one, &one, None).0, NETCODE_ERROR);
    assert_eq!(generate(-1, &one, &one, None).0, NETCODE_ERROR);
    assert_eq!(generate(33, &one, &one, None).0, NETCODE_ERROR);
    assert_eq!(generate(1, &[c"nonsense"], &one, None).0, NETCODE_ERROR);
    assert_eq!(generate(1, &one, &[c"nonsense"], None).0, NETCODE_ERROR);
    let key = [0u8; 32];
    let list = [one[0].as_ptr()];
    let mut token = [0u8; 2048];
    let (list, key, token) = (list.as_ptr(), key.as_ptr(), token.as_mut_ptr());
    let null_entry = [std::ptr::null::<c_char>()];
    // SAFETY: each call has one NULL argument (or a NULL entry in a list)
    // and otherwise valid ones.
    unsafe {
        let null_list = std::ptr::null();
        let calls = [
            generate_raw(null_list, list, key, token),
            generate_raw(list, null_list, key, token),
            generate_raw(list, list, std::ptr::null(), token),
            generate_raw(list, list, key, std::ptr::null_mut()),
            generate_raw(null_entry.as_ptr(), list, key, token),
        ];
        assert_eq!(calls, [NETCODE_ERROR; 5]);
    }
    let lines = netcode::test_log::take();
    assert!(
        logged(&lines, "33 server addresses is not 1 to 32"),
        "{lines:?}"
    );
}

#[test]
fn globals_survive_odd_values() {
    // The log level goes to DEBUG for a moment: no test that reads its
    // log lines runs meanwhile.
    let _settings = settings_changed();
    assert_eq!(netcode_init(), NETCODE_OK);
    netcode_term();
    netcode_log_level(99);
    netcode_log_level(-4);
    netcode_log_level(NETCODE_LOG_LEVEL_NONE);
    netcode_sleep(f64::NAN);
    netcode_sleep(-1.0);
    netcode_sleep(0.001);
    let t = netcode_time();
    assert!(t >= 0.0 && netcode_time() >= t);
    let mut bytes = [0u8; 64];
    // SAFETY: 64 writable bytes, or NULL / a negative count (refused).
    unsafe {
        netcode_random_bytes(bytes.as_mut_ptr(), 64);
        netcode_random_bytes(std::ptr::null_mut(), 64);
        netcode_random_bytes(bytes.as_mut_ptr(), -1);
    }
    assert_ne!(bytes, [0; 64]);
    netcode_set_printf_function(None);
    netcode_set_assert_function(None);
    // SAFETY: read through a raw pointer; no other thread sets the hook
    // (no other test does, and this one holds the settings).
    assert!(unsafe { (&raw const netcode_assert_function).read() }.is_some());
}
