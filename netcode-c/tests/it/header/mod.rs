//! `include/netcode.h` against the library built from this crate.
//!
//! * Symbols: the functions the header declares (and its one `extern`
//!   variable) are exactly the `netcode_*` symbols `libnetcode.a` and
//!   `libnetcode.so` define, either way (`nm`), and the shared library
//!   exports nothing else.
//! * Constants: every `#define` of the header with a value, as a C
//!   program compiled against the header prints it, equals the constant of
//!   the same name in [`netcode::abi`], and every constant there is in the
//!   header.
//! * Layouts: the size, alignment and every field's offset and size of the
//!   header's structs, as the C compiler lays them out, equal the Rust
//!   types' (`size_of`, `align_of`, `offset_of!`), and the fields are the
//!   header's, in its order.
//!
//! The header is parsed by the small reader in `reader.rs` (comments dropped,
//! preprocessor lines read for `#define`s only). The C program is built
//! with `$CC` (or `cc`) into a temporary directory. The libraries are the
//! ones `cargo test` built with this crate's rlib (see `library_dir`).
#![cfg(all(not(miri), any(target_os = "linux", target_os = "macos")))]

mod reader;

use std::collections::{BTreeMap, BTreeSet};
use std::mem::{align_of, offset_of, size_of};
use std::path::{Path, PathBuf};
use std::process::Command;

use netcode::abi::{self, netcode_address_t, netcode_client_config_t, netcode_server_config_t};
use reader::*;
/// `nm` of a library: its defined global symbols and their types.
fn symbols(library: &Path, dynamic: bool) -> BTreeMap<String, char> {
    let mut command = Command::new("nm");
    command.args(["-g", "--defined-only", "-P"]);
    if dynamic {
        command.arg("-D");
    }
    let output = command
        .arg(library)
        .output()
        .unwrap_or_else(|e| panic!("run nm on {}: {e}", library.display()));
    assert!(
        output.status.success(),
        "nm {} failed: {}",
        library.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    let mut found = BTreeMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let mut parts = line.split_whitespace();
        let (Some(name), Some(kind)) = (parts.next(), parts.next()) else {
            continue;
        };
        if name.ends_with(':') || name.ends_with(']') {
            continue; // an archive member's heading
        }
        // Mach-O prefixes C names with an underscore.
        let name = if cfg!(target_os = "macos") {
            name.strip_prefix('_').unwrap_or(name)
        } else {
            name
        };
        found.insert(name.to_owned(), kind.chars().next().unwrap_or('?'));
    }
    found
}

/// The directory holding `libnetcode.a` and the shared library: the one
/// this test binary is in (`target/debug/deps/`). `cargo test` compiles
/// this crate's library once for the tests that link it, as every crate
/// type it declares (`staticlib`, `cdylib`, `rlib`), and cargo names a
/// workspace package's library outputs without a hash when one of them is
/// a `cdylib`: the tests link `libnetcode.rlib`, and `libnetcode.a` and
/// `libnetcode.so` lie beside it, made from the same sources by the same
/// compile as the libraries `cargo build -p netcode-c` puts in
/// `target/debug` (here with the feature `test-hooks` on, which adds Rust
/// items only: nothing a C program sees).
fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.parent()
        .unwrap_or_else(|| panic!("{} has no directory", exe.display()))
        .to_owned()
}

fn shared_library_name() -> &'static str {
    if cfg!(target_os = "macos") {
        "libnetcode.dylib"
    } else {
        "libnetcode.so"
    }
}

#[test]
fn the_header_declares_exactly_what_the_libraries_export() {
    let header = header_text();
    let declarations = declarations(&header);
    let functions = declared_functions(&declarations);
    let variables = declared_variables(&declarations);
    assert!(
        functions.len() >= 60,
        "the header reader found only {} functions: {functions:?}",
        functions.len()
    );
    assert_eq!(
        variables,
        BTreeSet::from(["netcode_assert_function".to_owned()])
    );
    // The entries under the reference's names for programs built against
    // a header before 1.4.5 (its shorter server config): exported, not
    // declared (the header maps each name to its `_v2`, declared).
    let compatibility = [
        "netcode_default_server_config",
        "netcode_server_create",
        "netcode_server_create_dual",
    ];
    for name in compatibility {
        assert!(
            functions.contains(&format!("{name}_v2")),
            "{name}_v2 is not declared"
        );
        assert!(
            header.contains(&format!("#define {name} {name}_v2")),
            "the header does not map {name} to {name}_v2"
        );
    }
    let declared: BTreeSet<String> = functions
        .union(&variables)
        .cloned()
        .chain(compatibility.map(str::to_owned))
        .collect();

    let dir = library_dir();
    for (name, dynamic) in [("libnetcode.a", false), (shared_library_name(), true)] {
        let library = dir.join(name);
        assert!(
            library.is_file(),
            "{} is missing: cargo test builds it beside the rlib the tests link \
             (crate-type staticlib and cdylib in Cargo.toml)",
            library.display()
        );
        let all = symbols(&library, dynamic);
        let exported: BTreeMap<&String, &char> = all
            .iter()
            .filter(|(symbol, _)| symbol.starts_with("netcode_"))
            .collect();
        let exported_names: BTreeSet<String> = exported.keys().map(|s| (*s).clone()).collect();
        let missing: Vec<_> = declared.difference(&exported_names).collect();
        let extra: Vec<_> = exported_names.difference(&declared).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{name}: declared in netcode.h but not defined: {missing:?}; \
             defined but not declared in netcode.h: {extra:?}"
        );
        for (symbol, kind) in &exported {
            let want_code = functions.contains(*symbol) || compatibility.contains(&symbol.as_str());
            let is_code = matches!(kind, 'T' | 't');
            assert_eq!(
                want_code,
                is_code,
                "{name}: {symbol} has symbol type {kind}: the header declares it as a {}",
                if want_code { "function" } else { "variable" }
            );
        }
        if dynamic {
            // Nothing but the API: no Rust, ring or libc symbol leaks out of
            // the shared library to clash with the program's own.
            let others: Vec<_> = all
                .keys()
                .filter(|symbol| {
                    !symbol.starts_with("netcode_")
                        && !matches!(
                            symbol.as_str(),
                            "_init" | "_fini" | "_end" | "_edata" | "__bss_start"
                        )
                })
                .collect();
            assert!(
                others.is_empty(),
                "{name} exports symbols that are not the API: {others:?}"
            );
        }
        println!(
            "{name}: the {} functions and {} variable of netcode.h, and no other netcode_ symbol",
            functions.len(),
            variables.len()
        );
    }
}

/// The header's defines the Rust side has no constant for, with the reason.
const HEADER_ONLY: &[(&str, &str)] = &[
    ("NETCODE_CONST", "const or nothing, for the compiler"),
    (
        "NETCODE_PACKET_TAGGING",
        "compile-time switch of the C library; tagging is a runtime call here",
    ),
    (
        "NETCODE_CURRENT_FUNCTION",
        "the function name netcode_assert passes",
    ),
    (
        "NETCODE_LITTLE_ENDIAN",
        "checked against target_endian below",
    ),
    ("NETCODE_BIG_ENDIAN", "checked against target_endian below"),
];

/// Every constant of `abi` by name, as i64.
fn rust_constants() -> BTreeMap<&'static str, i64> {
    macro_rules! table {
        ($($name:ident),* $(,)?) => {
            BTreeMap::from([$((stringify!($name), i64::from(abi::$name))),*])
        };
    }
    table![
        NETCODE_VERSION_MAJOR,
        NETCODE_VERSION_MINOR,
        NETCODE_VERSION_PATCH,
        NETCODE_PLATFORM_WINDOWS,
        NETCODE_PLATFORM_MAC,
        NETCODE_PLATFORM_UNIX,
        NETCODE_PLATFORM,
        NETCODE_CONNECT_TOKEN_BYTES,
        NETCODE_KEY_BYTES,
        NETCODE_MAC_BYTES,
        NETCODE_USER_DATA_BYTES,
        NETCODE_MAX_SERVERS_PER_CONNECT,
        NETCODE_CLIENT_STATE_CONNECT_TOKEN_EXPIRED,
        NETCODE_CLIENT_STATE_INVALID_CONNECT_TOKEN,
        NETCODE_CLIENT_STATE_CONNECTION_TIMED_OUT,
        NETCODE_CLIENT_STATE_CONNECTION_RESPONSE_TIMED_OUT,
        NETCODE_CLIENT_STATE_CONNECTION_REQUEST_TIMED_OUT,
        NETCODE_CLIENT_STATE_CONNECTION_DENIED,
        NETCODE_CLIENT_STATE_DISCONNECTED,
        NETCODE_CLIENT_STATE_SENDING_CONNECTION_REQUEST,
        NETCODE_CLIENT_STATE_SENDING_CONNECTION_RESPONSE,
        NETCODE_CLIENT_STATE_CONNECTED,
        NETCODE_SERVER_CLIENT_DISCONNECT_REASON_NONE,
        NETCODE_SERVER_CLIENT_DISCONNECT_REASON_TIMED_OUT,
        NETCODE_SERVER_CLIENT_DISCONNECT_REASON_CLIENT_DISCONNECT,
        NETCODE_SERVER_CLIENT_DISCONNECT_REASON_SERVER_DISCONNECT,
        NETCODE_CLIENT_CREATE_ERROR_NONE,
        NETCODE_CLIENT_CREATE_ERROR_PARSE_ADDRESS_FAILED,
        NETCODE_CLIENT_CREATE_ERROR_PARSE_ADDRESS2_FAILED,
        NETCODE_CLIENT_CREATE_ERROR_SIMULATOR_REQUIRES_PORT,
        NETCODE_CLIENT_CREATE_ERROR_CREATE_SOCKET_IPV4_FAILED,
        NETCODE_CLIENT_CREATE_ERROR_CREATE_SOCKET_IPV6_FAILED,
        NETCODE_CLIENT_CREATE_ERROR_ALLOCATE_CLIENT_FAILED,
        NETCODE_CLIENT_CREATE_ERROR_MISSING_OVERRIDE_CALLBACK,
        NETCODE_SERVER_CREATE_ERROR_NONE,
        NETCODE_SERVER_CREATE_ERROR_PARSE_ADDRESS_FAILED,
        NETCODE_SERVER_CREATE_ERROR_PARSE_ADDRESS2_FAILED,
        NETCODE_SERVER_CREATE_ERROR_CREATE_SOCKET_IPV4_FAILED,
        NETCODE_SERVER_CREATE_ERROR_CREATE_SOCKET_IPV6_FAILED,
        NETCODE_SERVER_CREATE_ERROR_BIND_SOCKET_IPV4_FAILED,
        NETCODE_SERVER_CREATE_ERROR_BIND_SOCKET_IPV6_FAILED,
        NETCODE_SERVER_CREATE_ERROR_ALLOCATE_SERVER_FAILED,
        NETCODE_SERVER_CREATE_ERROR_MISSING_OVERRIDE_CALLBACK,
        NETCODE_MAX_CLIENTS,
        NETCODE_MAX_PACKET_SIZE,
        NETCODE_DEFAULT_MAX_CONNECT_TOKEN_LIFETIME,
        NETCODE_LOG_LEVEL_NONE,
        NETCODE_LOG_LEVEL_ERROR,
        NETCODE_LOG_LEVEL_INFO,
        NETCODE_LOG_LEVEL_DEBUG,
        NETCODE_OK,
        NETCODE_ERROR,
        NETCODE_ADDRESS_NONE,
        NETCODE_ADDRESS_IPV4,
        NETCODE_ADDRESS_IPV6,
    ]
}

/// A field of a Rust `#[repr(C)]` type: its C name, offset and size.
struct Field {
    c_name: &'static str,
    offset: usize,
    size: usize,
}

fn size_of_field<T, F>(_: fn(&T) -> &F) -> usize {
    size_of::<F>()
}

macro_rules! fields {
    ($ty:ty { $($field:ident $(as $c:literal)?),* $(,)? }) => {
        vec![$(Field {
            c_name: fields!(@name $field $($c)?),
            offset: offset_of!($ty, $field),
            size: size_of_field(|s: &$ty| &s.$field),
        }),*]
    };
    (@name $field:ident $c:literal) => { $c };
    (@name $field:ident) => { stringify!($field) };
}

/// The Rust side's structs: (C name, size, alignment, fields in order).
fn rust_structs() -> Vec<(&'static str, usize, usize, Vec<Field>)> {
    vec![
        (
            "netcode_address_t",
            size_of::<netcode_address_t>(),
            align_of::<netcode_address_t>(),
            fields!(netcode_address_t { data, port, type_ as "type" }),
        ),
        (
            "netcode_client_config_t",
            size_of::<netcode_client_config_t>(),
            align_of::<netcode_client_config_t>(),
            fields!(netcode_client_config_t {
                allocator_context,
                allocate_function,
                free_function,
                network_simulator,
                callback_context,
                state_change_callback,
                send_loopback_packet_callback,
                override_send_and_receive,
                send_packet_override,
                receive_packet_override,
            }),
        ),
        (
            "netcode_server_config_t",
            size_of::<netcode_server_config_t>(),
            align_of::<netcode_server_config_t>(),
            fields!(netcode_server_config_t {
                protocol_id,
                private_key,
                allocator_context,
                allocate_function,
                free_function,
                network_simulator,
                callback_context,
                connect_disconnect_callback,
                send_loopback_packet_callback,
                override_send_and_receive,
                send_packet_override,
                receive_packet_override,
                max_connect_token_lifetime,
            }),
        ),
    ]
}

/// Builds and runs a C program compiled against the header; its output.
fn run_c_program(name: &str, source: &str) -> String {
    let dir = std::env::temp_dir().join(format!("netcode-c-header-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let source_path = dir.join(format!("{name}.c"));
    let exe = dir.join(name);
    std::fs::write(&source_path, source).expect("write the C program");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let status = Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Werror", "-I"])
        .arg(crate_dir().join("include"))
        .arg(&source_path)
        .arg("-o")
        .arg(&exe)
        .status()
        .unwrap_or_else(|e| panic!("run the C compiler {cc:?}: {e}"));
    assert!(status.success(), "{cc} failed on {}", source_path.display());
    let output = Command::new(&exe).output().expect("run the C program");
    assert!(output.status.success(), "{} failed", exe.display());
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8(output.stdout).expect("utf-8 output")
}

#[test]
fn the_headers_constants_are_the_rust_constants() {
    let header = header_text();
    let defines = defines(&header);
    let skip = [
        "NETCODE_H",
        "NETCODE_DEBUG",
        "NETCODE_RELEASE",
        "NETCODE_VERSION_FULL",
    ];
    let mut source =
        String::from("#include <stdio.h>\n#include \"netcode.h\"\nint main(void)\n{\n");
    for (name, value) in &defines {
        if skip.contains(&name.as_str()) || HEADER_ONLY.iter().any(|(n, _)| n == name) {
            continue;
        }
        // A function's name mapped to its `_v2` (the server config's
        // entries) is no constant.
        if *value == format!("{name}_v2") {
            continue;
        }
        source.push_str(&format!(
            "    printf(\"{name} %lld\\n\", (long long)({name}));\n"
        ));
    }
    source.push_str("    printf(\"NETCODE_VERSION_FULL %s\\n\", NETCODE_VERSION_FULL);\n");
    source.push_str(
        "#if defined(NETCODE_LITTLE_ENDIAN) && !defined(NETCODE_BIG_ENDIAN)\n    printf(\"endian little\\n\");\n\
         #elif defined(NETCODE_BIG_ENDIAN) && !defined(NETCODE_LITTLE_ENDIAN)\n    printf(\"endian big\\n\");\n\
         #endif\n    return 0;\n}\n",
    );
    let output = run_c_program("constants", &source);

    let rust = rust_constants();
    let mut seen = BTreeSet::new();
    let mut endian = None;
    for line in output.lines() {
        let (name, value) = line.split_once(' ').expect("NAME VALUE");
        match name {
            "NETCODE_VERSION_FULL" => {
                assert_eq!(
                    value,
                    abi::NETCODE_VERSION_FULL.to_str().expect("ascii"),
                    "NETCODE_VERSION_FULL"
                );
            }
            "endian" => endian = Some(value.to_owned()),
            _ => {
                let value: i64 = value.parse().expect("an integer");
                let Some(want) = rust.get(name) else {
                    panic!(
                        "netcode.h defines {name} ({value}), which netcode::abi lacks \
                         (add it there, or to HEADER_ONLY here with the reason)"
                    );
                };
                assert_eq!(
                    value, *want,
                    "{name}: netcode.h says {value}, netcode::abi says {want}"
                );
            }
        }
        seen.insert(name.to_owned());
    }
    let missing: Vec<_> = rust.keys().filter(|name| !seen.contains(**name)).collect();
    assert!(
        missing.is_empty(),
        "netcode::abi has constants netcode.h lacks: {missing:?}"
    );
    let want_endian = if cfg!(target_endian = "little") {
        "little"
    } else {
        "big"
    };
    assert_eq!(
        endian.as_deref(),
        Some(want_endian),
        "the header's byte order"
    );

    // Every NETCODE_ constant in abi.rs is one the table above checks: a
    // constant added there without a header define fails here.
    let abi_source =
        std::fs::read_to_string(crate_dir().join("src/abi.rs")).expect("read src/abi.rs");
    for line in abi_source.lines() {
        if let Some(rest) = line.trim_start().strip_prefix("pub const NETCODE_") {
            let name = format!(
                "NETCODE_{}",
                rest.split(':').next().unwrap_or_default().trim()
            );
            assert!(
                rust.contains_key(name.as_str()) || name == "NETCODE_VERSION_FULL",
                "src/abi.rs has {name}, which this test's table (and so netcode.h) lacks"
            );
        }
    }
    println!("{} constants of netcode.h equal netcode::abi's", seen.len());
}

#[test]
fn the_headers_struct_layouts_are_the_rust_layouts() {
    let header = header_text();
    let declarations = declarations(&header);
    let structs = rust_structs();

    let mut source = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include \"netcode.h\"\nint main(void)\n{\n",
    );
    for (name, _, _, fields) in &structs {
        source.push_str(&format!(
            "    printf(\"{name} size %lu\\n\", (unsigned long) sizeof(struct {name}));\n\
             \x20   printf(\"{name} align %lu\\n\", (unsigned long) _Alignof(struct {name}));\n"
        ));
        for field in fields {
            let f = field.c_name;
            source.push_str(&format!(
                "    printf(\"{name}.{f} offset %lu\\n\", (unsigned long) offsetof(struct {name}, {f}));\n\
                 \x20   printf(\"{name}.{f} size %lu\\n\", (unsigned long) sizeof(((struct {name} *) 0)->{f}));\n"
            ));
        }
    }
    source.push_str(
        "    printf(\"netcode_address_t.data.ipv4 offset %lu\\n\", (unsigned long) offsetof(struct netcode_address_t, data.ipv4));\n\
         \x20   printf(\"netcode_address_t.data.ipv6 offset %lu\\n\", (unsigned long) offsetof(struct netcode_address_t, data.ipv6));\n\
         \x20   return 0;\n}\n",
    );
    let output = run_c_program("layouts", &source);
    let c: BTreeMap<String, usize> = output
        .lines()
        .map(|line| {
            let (key, value) = line.rsplit_once(' ').expect("KEY VALUE");
            (key.to_owned(), value.parse().expect("a number"))
        })
        .collect();

    for (name, size, align, fields) in &structs {
        let header_fields = struct_fields(&declarations, name);
        let rust_fields: Vec<&str> = fields.iter().map(|f| f.c_name).collect();
        assert_eq!(
            header_fields, rust_fields,
            "struct {name}: the header's fields (left) and the Rust type's (right)"
        );
        assert_eq!(c[&format!("{name} size")], *size, "sizeof(struct {name})");
        assert_eq!(
            c[&format!("{name} align")],
            *align,
            "alignment of struct {name}"
        );
        for field in fields {
            let f = field.c_name;
            assert_eq!(
                c[&format!("{name}.{f} offset")],
                field.offset,
                "offsetof({name}, {f})"
            );
            assert_eq!(
                c[&format!("{name}.{f} size")],
                field.size,
                "sizeof of {name}.{f}"
            );
        }
        println!(
            "struct {name}: {size} bytes, alignment {align}, {} fields at the same offsets and sizes",
            fields.len()
        );
    }
    assert_eq!(c["netcode_address_t.data.ipv4 offset"], 0);
    assert_eq!(c["netcode_address_t.data.ipv6 offset"], 0);
}

#[test]
fn the_header_reader_reads_what_it_must() {
    // The reader itself, on a small header with every shape it handles.
    let text = "/* a comment with f( */\n#define A 1 /* x */\n#define F(x) x\n#define B \\\n  2\n\
                #ifdef __cplusplus\nextern \"C\" {\n#else\nint netcode_c_only(void);\n#endif\n\
                #define EMPTY\nstruct s_t\n{\n    union { int a; long b; } data;\n    void (*cb)(void*,int);\n\
                    unsigned char key[4];\n    int last;\n};\nint netcode_f( struct s_t * s );\n\
                extern void (*netcode_v)( const char * file, int line );\n\
                char * netcode_g( int a,\n  int b );\n#ifdef __cplusplus\n}\n#endif\n";
    let declarations = declarations(text);
    assert_eq!(
        declared_functions(&declarations),
        BTreeSet::from([
            "netcode_c_only".to_owned(),
            "netcode_f".to_owned(),
            "netcode_g".to_owned()
        ])
    );
    assert_eq!(
        declared_variables(&declarations),
        BTreeSet::from(["netcode_v".to_owned()])
    );
    assert_eq!(
        defines(text),
        vec![
            ("A".to_owned(), "1".to_owned()),
            ("B".to_owned(), "2".to_owned())
        ]
    );
    assert_eq!(
        struct_fields(&declarations, "s_t"),
        vec!["data", "cb", "key", "last"]
    );
}

/// On Linux the shared library carries the SONAME of the C reference's
/// CMake build, `libnetcode.so.<major>` (build.rs), the link install.sh
/// makes next to `libnetcode.so.<version>`.
#[cfg(target_os = "linux")]
#[test]
fn the_shared_library_is_libnetcode_so_major() {
    let header = header_text();
    let version = defines(&header)
        .into_iter()
        .find(|(name, _)| name == "NETCODE_VERSION_FULL")
        .map(|(_, value)| value.trim_matches('"').to_owned())
        .expect("NETCODE_VERSION_FULL in the header");
    let major = version.split('.').next().expect("a major number");
    let library = library_dir().join("libnetcode.so");
    let output = Command::new("readelf")
        .arg("-d")
        .arg(&library)
        .output()
        .unwrap_or_else(|e| panic!("run readelf on {}: {e}", library.display()));
    assert!(output.status.success(), "readelf -d {}", library.display());
    let dynamic = String::from_utf8_lossy(&output.stdout);
    let expected = format!("Library soname: [libnetcode.so.{major}]");
    assert!(
        dynamic.contains(&expected),
        "{} has no {expected}:\n{dynamic}",
        library.display()
    );
}
