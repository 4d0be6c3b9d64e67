//! Prints a fresh connect token, in hex on one line, as a web backend would
//! issue it.
//!
//! ```text
//! cargo run -p netcode-examples --example token -- [OPTIONS] [SERVER_ADDRESS...]
//!
//!   --key HEX          private key, 64 hex digits (default: the reference's test key)
//!   --protocol-id N    protocol id, decimal or 0x hex (default 0x1122334455667788)
//!   --client-id N      client id, decimal or 0x hex (default: random)
//!   --expire SECONDS   token lifetime, negative for never (default 30)
//!   --timeout SECONDS  connection timeout, negative for none (default 5)
//!   SERVER_ADDRESS     one to 32 addresses (default 127.0.0.1:40000)
//! ```

use std::process::ExitCode;

use netcode_examples::{
    CONNECT_TOKEN_EXPIRY, CONNECT_TOKEN_TIMEOUT, PRIVATE_KEY, PROTOCOL_ID, SERVER_ADDRESS, finish,
    from_hex, to_hex,
};
use netcode_std::proto::Key;
use netcode_std::{ConnectTokenBuilder, random_bytes};

pub(crate) fn main() -> ExitCode {
    finish(run())
}

fn run() -> Result<(), String> {
    let mut key = PRIVATE_KEY;
    let mut protocol_id = PROTOCOL_ID;
    let mut client_id = None;
    let mut expire = CONNECT_TOKEN_EXPIRY;
    let mut timeout = CONNECT_TOKEN_TIMEOUT;
    let mut addresses = Vec::new();

    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if !arg.starts_with("--") {
            addresses.push(arg);
            continue;
        }
        let value = args.next().ok_or(format!("{arg} needs a value"))?;
        match arg.as_str() {
            "--key" => {
                key = from_hex(&value)?
                    .try_into()
                    .map_err(|_| "--key needs 64 hex digits".to_string())?;
            }
            "--protocol-id" => protocol_id = number(&arg, &value)?,
            "--client-id" => client_id = Some(number(&arg, &value)?),
            "--expire" => expire = value.parse().map_err(|_| bad(&arg, &value))?,
            "--timeout" => timeout = value.parse().map_err(|_| bad(&arg, &value))?,
            _ => return Err(format!("unknown option {arg}")),
        }
    }
    if addresses.is_empty() {
        addresses.push(SERVER_ADDRESS.to_string());
    }
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

fn number(option: &str, value: &str) -> Result<u64, String> {
    match value.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => value.parse(),
    }
    .map_err(|_| bad(option, value))
}

fn bad(option: &str, value: &str) -> String {
    format!("{option}: {value:?} is not a valid number")
}
