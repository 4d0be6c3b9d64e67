//! The SDK's messages that the `agones` crate does not export (it exports
//! `GameServer` and its parts), written as prost messages from the fields
//! of `sdk.proto` and `beta.proto`.

/// `agones.dev.sdk.Empty`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Empty {}

/// `agones.dev.sdk.KeyValue`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct KeyValue {
    #[prost(string, tag = "1")]
    pub key: String,
    #[prost(string, tag = "2")]
    pub value: String,
}

/// `agones.dev.sdk.beta.List`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct List {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(int64, tag = "2")]
    pub capacity: i64,
    #[prost(string, repeated, tag = "3")]
    pub values: Vec<String>,
}

/// `agones.dev.sdk.beta.GetListRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetListRequest {
    #[prost(string, tag = "1")]
    pub name: String,
}

/// `agones.dev.sdk.beta.AddListValueRequest` and `RemoveListValueRequest`
/// (the same fields).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ListValueRequest {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub value: String,
}
