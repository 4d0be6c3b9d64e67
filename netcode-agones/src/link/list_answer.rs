//! What the sidecar's refusal of a list call means (beta Counters and
//! Lists API).
//!
//! The SDK's proto comments promise gRPC codes (`NOT_FOUND`,
//! `ALREADY_EXISTS`, `OUT_OF_RANGE`), but Agones' SDK server
//! (`pkg/sdkserver/sdkserver.go`: `GetList`, `AddListValue`,
//! `RemoveListValue`) answers with plain Go errors, which grpc-go sends
//! with code `Unknown`: the meaning is in the message's first words.
//! Both are read here, the message first.

use tonic::Code;

/// A refused list call, by what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListRefusal {
    /// The GameServer has no list of that name (`list not found: NAME`).
    ListMissing,
    /// The value is not in the list (`not found: value V not in list L`
    /// since Agones 1.53, `not found. Value: V not found in List: L`
    /// before), or a `NOT_FOUND` code that does not say which.
    ValueMissing,
    /// The value is already in the list (`already exists. Value: ...`).
    ValueExists,
    /// The list is at its capacity (`out of range. No available
    /// capacity. ...`). The sidecar checks this before duplicates, so the
    /// value may be in the list already.
    Full,
    /// The API is not there: the CountsAndLists feature is off
    /// (`CountsAndLists not enabled`), the call is unimplemented, or not
    /// allowed.
    Unavailable,
    /// Anything else: the sidecar is away or busy.
    Other,
}

/// Reads a refusal from its gRPC `code` and `message`.
pub(crate) fn read_refusal(code: Code, message: &str) -> ListRefusal {
    let message = message.trim_start().to_ascii_lowercase();
    // The first words of the SDK server's messages. "list not found" and
    // "... List not found" (UpdateList's wording) come before the plain
    // "not found" of a missing value.
    if message.starts_with("list not found") || message.contains("list not found") {
        return ListRefusal::ListMissing;
    }
    if message.starts_with("not found") {
        return ListRefusal::ValueMissing;
    }
    if message.starts_with("already exists") {
        return ListRefusal::ValueExists;
    }
    if message.starts_with("out of range") {
        return ListRefusal::Full;
    }
    if message.contains("not enabled") {
        return ListRefusal::Unavailable;
    }
    match code {
        Code::NotFound => ListRefusal::ValueMissing,
        Code::AlreadyExists => ListRefusal::ValueExists,
        Code::OutOfRange => ListRefusal::Full,
        Code::Unimplemented
        | Code::InvalidArgument
        | Code::FailedPrecondition
        | Code::PermissionDenied
        | Code::Unauthenticated => ListRefusal::Unavailable,
        _ => ListRefusal::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sidecars_messages_with_code_unknown() {
        let unknown = |message| read_refusal(Code::Unknown, message);
        assert_eq!(unknown("list not found: players"), ListRefusal::ListMissing);
        assert_eq!(
            unknown("not found. players List not found"),
            ListRefusal::ListMissing
        );
        assert_eq!(
            unknown("not found. Value: 42 not found in List: players"),
            ListRefusal::ValueMissing
        );
        assert_eq!(
            unknown("not found: value 42 not in list players"),
            ListRefusal::ValueMissing
        );
        assert_eq!(
            unknown("already exists. Value: 42 already in List: players"),
            ListRefusal::ValueExists
        );
        assert_eq!(
            unknown("out of range. No available capacity. Current Capacity: 2, List Size: 2"),
            ListRefusal::Full
        );
        assert_eq!(
            unknown("CountsAndLists not enabled"),
            ListRefusal::Unavailable
        );
        assert_eq!(unknown("transport is closing"), ListRefusal::Other);
    }

    #[test]
    fn the_protos_codes() {
        assert_eq!(
            read_refusal(Code::NotFound, "42"),
            ListRefusal::ValueMissing
        );
        assert_eq!(
            read_refusal(Code::AlreadyExists, "42"),
            ListRefusal::ValueExists
        );
        assert_eq!(read_refusal(Code::OutOfRange, "full"), ListRefusal::Full);
        assert_eq!(
            read_refusal(Code::Unimplemented, ""),
            ListRefusal::Unavailable
        );
        assert_eq!(read_refusal(Code::Unavailable, ""), ListRefusal::Other);
        assert_eq!(read_refusal(Code::DeadlineExceeded, ""), ListRefusal::Other);
    }
}
