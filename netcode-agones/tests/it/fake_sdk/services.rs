//! The fake's two gRPC services, routed by hand on the method in the
//! request's path: each call decoded and answered through tonic's `Grpc`
//! with prost's codec (unary, client-streaming Health, server-streaming
//! WatchGameServer), and recorded.

use std::convert::Infallible;
use std::future::{Future, ready};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use agones::{GameServer, ObjectMeta};
use tokio_stream::StreamExt;
use tokio_stream::wrappers::WatchStream;
use tonic::body::BoxBody;
use tonic::codec::{ProstCodec, Streaming};
use tonic::server::{Grpc, NamedService};
use tonic::{Request, Response};

use super::messages::{Empty, GetListRequest, KeyValue, List, ListValueRequest};
use super::{METADATA_PREFIX, Record, Shared, lock};

/// A response future of the services.
type Answer = Pin<Box<dyn Future<Output = Result<http::Response<BoxBody>, Infallible>> + Send>>;

/// Answers one unary call with `handle`.
async fn unary<Req, Resp>(
    request: http::Request<BoxBody>,
    handle: impl FnOnce(Req) -> Result<Resp, tonic::Status> + Send + 'static,
) -> http::Response<BoxBody>
where
    Req: prost::Message + Default + Send + 'static,
    Resp: prost::Message + Send + 'static,
{
    let mut handle = Some(handle);
    let service = tower::service_fn(move |call: Request<Req>| {
        let answer = match handle.take() {
            Some(handle) => handle(call.into_inner()).map(Response::new),
            None => Err(tonic::Status::internal("one call per request")),
        };
        ready(answer)
    });
    Grpc::new(ProstCodec::<Resp, Req>::default())
        .unary(service, request)
        .await
}

/// The method a gRPC request calls: the last part of its path.
fn method_of(request: &http::Request<BoxBody>) -> String {
    let path = request.uri().path();
    path.rsplit('/').next().unwrap_or_default().to_owned()
}

/// `agones.dev.sdk.SDK`.
#[derive(Clone)]
pub(super) struct StableSdk(pub(super) Arc<Shared>);

impl NamedService for StableSdk {
    const NAME: &'static str = "agones.dev.sdk.SDK";
}

impl tower::Service<http::Request<BoxBody>> for StableSdk {
    type Response = http::Response<BoxBody>;
    type Error = Infallible;
    type Future = Answer;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<BoxBody>) -> Answer {
        let shared = self.0.clone();
        Box::pin(async move { Ok(stable(shared, request).await) })
    }
}

/// Routes a call of the stable service by its method.
async fn stable(shared: Arc<Shared>, request: http::Request<BoxBody>) -> http::Response<BoxBody> {
    let method = method_of(&request);
    // Answered once queued; the GameServer shows it after the delay.
    let state_call = |state: &'static str| {
        let shared = shared.clone();
        let method = method.clone();
        move |_: Empty| {
            shared.call(&method, |_| ());
            shared.queue_state(state);
            Ok(Empty {})
        }
    };
    match method.as_str() {
        "Ready" => {
            let probed = lock(&shared.ready_probe).as_ref().map(|probe| probe());
            {
                let mut record = lock(&shared.record);
                if record.probed_at_ready.is_none() {
                    record.probed_at_ready = probed;
                }
            }
            unary(request, state_call("Ready")).await
        }
        "Allocate" => unary(request, state_call("Allocated")).await,
        "Shutdown" => unary(request, state_call("Shutdown")).await,
        "GetGameServer" => {
            unary(request, move |_: Empty| {
                Ok(shared.call("GetGameServer", |r| r.gameserver.clone()))
            })
            .await
        }
        "SetLabel" | "SetAnnotation" => {
            let label = method == "SetLabel";
            unary(request, move |kv: KeyValue| {
                shared.call(&method, |r| {
                    let meta = r
                        .gameserver
                        .object_meta
                        .get_or_insert_with(ObjectMeta::default);
                    let map = if label {
                        &mut meta.labels
                    } else {
                        &mut meta.annotations
                    };
                    map.insert(format!("{METADATA_PREFIX}{}", kv.key), kv.value);
                });
                shared.push();
                Ok(Empty {})
            })
            .await
        }
        "Health" => {
            let service = tower::service_fn(move |call: Request<Streaming<Empty>>| {
                let shared = shared.clone();
                async move {
                    shared.call("Health", |r| r.health_streams += 1);
                    let mut stream = call.into_inner();
                    while stream.message().await?.is_some() {
                        let mut record = lock(&shared.record);
                        record.health_pings += 1;
                        record.last_health = Some(Instant::now());
                    }
                    Ok::<_, tonic::Status>(Response::new(Empty {}))
                }
            });
            Grpc::new(ProstCodec::<Empty, Empty>::default())
                .client_streaming(service, request)
                .await
        }
        "WatchGameServer" => {
            // The current GameServer first, then the latest on each
            // change (WatchStream: changes in between coalesced).
            shared.call("WatchGameServer", |_| ());
            let receiver = shared.watched.subscribe();
            let mut receiver = Some(receiver);
            let service = tower::service_fn(move |_: Request<Empty>| {
                ready(match receiver.take() {
                    Some(receiver) => Ok(Response::new(
                        WatchStream::new(receiver).map(Ok::<GameServer, tonic::Status>),
                    )),
                    None => Err(tonic::Status::internal("one call per request")),
                })
            });
            Grpc::new(ProstCodec::<GameServer, Empty>::default())
                .server_streaming(service, request)
                .await
        }
        _ => {
            shared.call(&method, |_| ());
            tonic::Status::unimplemented(format!("the fake has no {method}")).into_http()
        }
    }
}

/// `agones.dev.sdk.beta.SDK`: the list calls.
#[derive(Clone)]
pub(super) struct BetaSdk(pub(super) Arc<Shared>);

impl NamedService for BetaSdk {
    const NAME: &'static str = "agones.dev.sdk.beta.SDK";
}

impl tower::Service<http::Request<BoxBody>> for BetaSdk {
    type Response = http::Response<BoxBody>;
    type Error = Infallible;
    type Future = Answer;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<BoxBody>) -> Answer {
        let shared = self.0.clone();
        Box::pin(async move { Ok(beta(shared, request).await) })
    }
}

/// Routes a call of the beta service by its method.
async fn beta(shared: Arc<Shared>, request: http::Request<BoxBody>) -> http::Response<BoxBody> {
    let method = method_of(&request);
    let list = |r: &Record, name: &str| {
        r.lists.get(name).map(|(capacity, values)| List {
            name: name.to_owned(),
            capacity: *capacity,
            values: values.clone(),
        })
    };
    // The SDK server's answers (pkg/sdkserver/sdkserver.go, GetList,
    // AddListValue, RemoveListValue): plain errors, so code Unknown, with
    // these messages; the capacity checked before duplicates; an empty
    // List for a change done.
    let refused = tonic::Status::unknown;
    match method.as_str() {
        "GetList" => {
            unary(request, move |get: GetListRequest| {
                shared
                    .call("GetList", |r| list(r, &get.name))
                    .ok_or_else(|| refused(format!("list not found: {}", get.name)))
            })
            .await
        }
        "AddListValue" => {
            unary(request, move |add: ListValueRequest| {
                shared.call("AddListValue", |r| {
                    let Some((capacity, values)) = r.lists.get_mut(&add.name) else {
                        return Err(refused(format!("list not found: {}", add.name)));
                    };
                    if i64::try_from(values.len()).unwrap_or(i64::MAX) >= *capacity {
                        return Err(refused(format!(
                            "out of range. No available capacity. Current Capacity: {capacity}, List Size: {}",
                            values.len()
                        )));
                    }
                    if values.contains(&add.value) {
                        return Err(refused(format!(
                            "already exists. Value: {} already in List: {}",
                            add.value, add.name
                        )));
                    }
                    values.push(add.value);
                    Ok(List::default())
                })
            })
            .await
        }
        "RemoveListValue" => {
            unary(request, move |remove: ListValueRequest| {
                shared.call("RemoveListValue", |r| {
                    let Some((_, values)) = r.lists.get_mut(&remove.name) else {
                        return Err(refused(format!("list not found: {}", remove.name)));
                    };
                    let Some(at) = values.iter().position(|v| *v == remove.value) else {
                        return Err(refused(format!(
                            "not found: value {} not in list {}",
                            remove.value, remove.name
                        )));
                    };
                    values.remove(at);
                    Ok(List::default())
                })
            })
            .await
        }
        _ => {
            shared.call(&method, |_| ());
            tonic::Status::unimplemented(format!("the fake has no beta {method}")).into_http()
        }
    }
}
