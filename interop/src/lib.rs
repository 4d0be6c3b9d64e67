//! Live interoperability tests live in `tests/`: our transports talking to
//! other netcode implementations over loopback UDP. This library is empty.
