//! Prints a fresh connect token, in hex on one line, as a web backend would
//! issue it.
//!
//! `USAGE`, which `--help` prints, says what it takes.

use std::process::ExitCode;

use lexopt::{Arg, Parser, ValueExt};
use netcode_examples::{
    CONNECT_TOKEN_EXPIRY, CONNECT_TOKEN_TIMEOUT, CommandLineError, PRIVATE_KEY, PROTOCOL_ID,
    SERVER_ADDRESS, from_hex, run_program, to_hex, unexpected, value,
};
use netcode_std::proto::Key;
use netcode_std::{ConnectTokenBuilder, random_bytes};

/// What `--help` prints.
const USAGE: &str = "\
token: prints a fresh connect token, in hex on one line, as a web backend
would issue it

usage: cargo run -p netcode-examples --example token -- [OPTIONS] [SERVER_ADDRESS...]

arguments:
  SERVER_ADDRESS     one to 32 server addresses, in the order the client
                     tries them (default 127.0.0.1:40000)

options:
  --key HEX          private key, 64 hex digits (default: the reference's
                     test key)
  --protocol-id N    protocol id, decimal or 0x hex (default
                     0x1122334455667788)
  --client-id N      client id, decimal or 0x hex (default: random)
  --expire SECONDS   token lifetime, negative for never (default 30)
  --timeout SECONDS  connection timeout, negative for none (default 5)
  -h, --help         print this help
";

pub(crate) fn main() -> ExitCode {
    run_program(USAGE, parse, run)
}

/// What the token is made of.
struct Request {
    key: [u8; 32],
    protocol_id: u64,
    client_id: Option<u64>,
    expire: i64,
    timeout: i32,
    addresses: Vec<String>,
}

fn parse(parser: &mut Parser) -> Result<Request, CommandLineError> {
    let mut request = Request {
        key: PRIVATE_KEY,
        protocol_id: PROTOCOL_ID,
        client_id: None,
        expire: CONNECT_TOKEN_EXPIRY,
        timeout: CONNECT_TOKEN_TIMEOUT,
        addresses: Vec::new(),
    };
    while let Some(arg) = parser.next()? {
        match arg {
            Arg::Long("key") => {
                let hex = parser.value()?.string()?;
                request.key = from_hex(&hex)?
                    .try_into()
                    .map_err(|_| "--key needs 64 hex digits".to_string())?;
            }
            Arg::Long("protocol-id") => request.protocol_id = number(parser, "--protocol-id")?,
            Arg::Long("client-id") => request.client_id = Some(number(parser, "--client-id")?),
            Arg::Long("expire") => request.expire = value(parser, "--expire", "a whole number")?,
            Arg::Long("timeout") => {
                request.timeout = value(parser, "--timeout", "a whole number")?;
            }
            Arg::Value(address) => request.addresses.push(address.string()?),
            other => return Err(unexpected(other)),
        }
    }
    if request.addresses.is_empty() {
        request.addresses.push(SERVER_ADDRESS.to_string());
    }
    Ok(request)
}

fn run(request: Request) -> Result<(), String> {
    let Request {
        key,
        protocol_id,
        client_id,
        expire,
        timeout,
        addresses,
    } = request;
    let client_id = match client_id {
        Some(id) => id,
        None => {
            let mut bytes = [0u8; 8];
            random_bytes(&mut bytes).map_err(|e| e.to_string())?;
            u64::from_le_bytes(bytes)
        }
    };

    let key = Key::from_bytes(key);
    let token = ConnectTokenBuilder::new(protocol_id, &key, client_id)
        .server_addresses(&addresses)
        .expire_seconds(expire)
        .timeout_seconds(timeout)
        .generate()
        .map_err(|e| e.to_string())?;
    println!("{}", to_hex(&token));
    Ok(())
}

/// The value of `option`: a number, decimal or `0x` hex.
fn number(parser: &mut Parser, option: &str) -> Result<u64, CommandLineError> {
    let text = parser.value()?.string()?;
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    }
    .map_err(|_| format!("{option}: {text:?} is not a number, decimal or 0x hex").into())
}
