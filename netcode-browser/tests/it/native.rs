//! The connection scenarios of `scenario` run natively (`web` runs the
//! same ones in headless Chromium).

use crate::scenario;

#[test]
fn handshake_payloads_and_disconnect() {
    scenario::handshake_payloads_and_disconnect();
}

#[test]
fn a_closed_session_disconnects_the_client() {
    scenario::a_closed_session_disconnects_the_client();
}

#[test]
fn a_server_disconnect_then_close_applies_in_order() {
    scenario::a_server_disconnect_then_close_applies_in_order();
}
