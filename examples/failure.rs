//! What a client's connection attempt that ended without a connection can
//! mean, and what to do about it, from the state it ended in (the client
//! example prints it with its `error:` line).
//!
//! A server answers a connection request only if it admits the token
//! (STANDARD.md, *Processing connection requests*: anything else is
//! ignored), or with a denial when it is full. So a token it refuses (a
//! wrong private key or protocol id, the restart rule, an address it does
//! not list, an expiry already past by the server's clock) looks to the
//! client like no server at all: its requests time out. The client can
//! only list the causes; the server logs which one it was for each
//! request it refuses.

use std::fmt::Write;
use std::net::SocketAddr;

use netcode_std::ClientState;

/// Why a connection attempt to `servers` that ended (or was stopped) in
/// `state` made no connection, and what to do about each cause; `None` for
/// a state that says nothing about it (disconnected, or connected).
pub fn explain_failed_connection(state: ClientState, servers: &[SocketAddr]) -> Option<String> {
    let mut tried = String::new();
    for (i, address) in servers.iter().enumerate() {
        let _ = write!(tried, "{}{address}", if i == 0 { "" } else { ", " });
    }
    Some(match state {
        ClientState::SendingConnectionRequest | ClientState::ConnectionRequestTimedOut => {
            format!(
                "no server answered the connection requests to {tried}. A server answers \
                 only a token it admits, so one of these:\n\
                 \x20 - no server is running there, or it is not reachable from here: start \
                 it, check the address, the port and any firewall;\n\
                 \x20 - the server's private key or protocol id is not the token's: give the \
                 server and the token's issuer the same ones;\n\
                 \x20 - the token was issued in or before the second the server started (the \
                 restart rule), and is refused until it expires: get a new one issued after \
                 the server printed `server listening on` (this client issues one each run).\n\
                 The server's log names the reason for each request it refuses."
            )
        }
        ClientState::SendingConnectionResponse | ClientState::ConnectionResponseTimedOut => {
            format!(
                "a server at {tried} answered the connection request but not the challenge \
                 response: the packets were lost, or the server stopped or restarted in \
                 between; try again"
            )
        }
        ClientState::ConnectionDenied => {
            format!("every server that answered ({tried}) is full: try again later")
        }
        ClientState::ConnectTokenExpired => {
            "the connect token expired before a connection was made: get a new one and \
             connect within its lifetime"
                .to_owned()
        }
        ClientState::InvalidConnectToken => {
            "the connect token could not be read: it is not a netcode 1.02 token, or was damaged"
                .to_owned()
        }
        ClientState::ConnectionTimedOut | ClientState::Disconnected | ClientState::Connected => {
            return None;
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_without_an_answer_lists_every_silent_refusal() {
        let servers = [
            "127.0.0.1:40000".parse().unwrap(),
            "[::1]:40000".parse().unwrap(),
        ];
        for state in [
            ClientState::ConnectionRequestTimedOut,
            ClientState::SendingConnectionRequest,
        ] {
            let text = explain_failed_connection(state, &servers).unwrap();
            for cause in [
                "to 127.0.0.1:40000, [::1]:40000.",
                "no server is running there",
                "private key or protocol id",
                "the restart rule",
                "The server's log names the reason",
            ] {
                assert!(text.contains(cause), "{state}: no {cause:?} in\n{text}");
            }
        }
    }

    #[test]
    fn each_other_failure_says_what_it_was() {
        let servers = ["127.0.0.1:40000".parse().unwrap()];
        for (state, says) in [
            (
                ClientState::ConnectionResponseTimedOut,
                "challenge response",
            ),
            (ClientState::ConnectionDenied, "is full"),
            (ClientState::ConnectTokenExpired, "expired"),
            (ClientState::InvalidConnectToken, "could not be read"),
        ] {
            let text = explain_failed_connection(state, &servers).unwrap();
            assert!(text.contains(says), "{state}: {text}");
            assert!(!text.contains("restart rule"), "{state}: {text}");
        }
        for state in [
            ClientState::Connected,
            ClientState::Disconnected,
            ClientState::ConnectionTimedOut,
        ] {
            assert_eq!(explain_failed_connection(state, &servers), None);
        }
    }
}
