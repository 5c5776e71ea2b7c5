//! Requests to the server and their answers: each in its span, carrying
//! its trace context, a given-up request told to the server, listings read
//! page by page.

use rmcp::model::{
    CancelledNotificationParam, ClientRequest, ListPromptsRequest, ListResourceTemplatesRequest,
    ListResourcesRequest, ListToolsRequest, PaginatedRequestParams, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RequestHandle, RoleClient};
use serde_json::Value;
use tracing::Span;

use super::connection::Shared;
use super::error::ClientError;
use crate::telemetry;

/// A request's span until its answer comes: a request given up before
/// (cancelled, out of time) ends its span as `cancelled`.
pub(super) struct Pending {
    pub(super) span: Option<Span>,
}

impl Pending {
    pub(super) fn new(span: Option<Span>) -> Self {
        Self { span }
    }

    /// Records the request's id, and the revision the connection speaks.
    pub(super) fn sent(&self, peer: &Peer<RoleClient>, id: &RequestId) {
        if let Some(span) = &self.span {
            let info = peer.peer_info();
            let version = info.as_ref().map(|info| info.protocol_version.as_str());
            telemetry::record_sent(span, id, version);
        }
    }

    /// A failure to send ends the span with it.
    pub(super) fn check<T>(
        &mut self,
        sent: Result<T, rmcp::ServiceError>,
    ) -> Result<T, rmcp::ServiceError> {
        if let Err(error) = &sent
            && let Some(span) = self.span.take()
        {
            telemetry::record_failure(&span, error);
        }
        sent
    }

    pub(super) fn answered(&mut self, answer: &Result<ServerResult, rmcp::ServiceError>) {
        if let Some(span) = self.span.take() {
            telemetry::record_answer(&span, answer);
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(span) = self.span.take() {
            telemetry::record_abandoned(&span, "cancelled");
        }
    }
}

/// One page of a listing: its items, and the cursor of the next page.
pub(super) type Page<T> = (Vec<T>, Option<String>);

/// The most pages a listing reads: a server that never stops giving a
/// next cursor gets an error rather than a client that loops forever.
pub(super) const MAX_PAGES: usize = 10_000;

pub(super) fn list_tools(params: PaginatedRequestParams) -> ClientRequest {
    ClientRequest::ListToolsRequest(ListToolsRequest::with_param(params))
}

pub(super) fn list_resources(params: PaginatedRequestParams) -> ClientRequest {
    ClientRequest::ListResourcesRequest(ListResourcesRequest::with_param(params))
}

pub(super) fn list_resource_templates(params: PaginatedRequestParams) -> ClientRequest {
    ClientRequest::ListResourceTemplatesRequest(ListResourceTemplatesRequest::with_param(params))
}

pub(super) fn list_prompts(params: PaginatedRequestParams) -> ClientRequest {
    ClientRequest::ListPromptsRequest(ListPromptsRequest::with_param(params))
}

/// Tells the server a request was given up, unless disarmed.
pub(super) struct Abandoned<'a> {
    peer: &'a Peer<RoleClient>,
    id: Option<RequestId>,
}

impl<'a> Abandoned<'a> {
    pub(super) fn new(peer: &'a Peer<RoleClient>, id: RequestId) -> Self {
        Self { peer, id: Some(id) }
    }

    pub(super) fn disarm(&mut self) {
        self.id = None;
    }
}

impl Drop for Abandoned<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let peer = self.peer.clone();
        let reason = Some("the call was cancelled".to_owned());
        tokio::spawn(async move {
            let _ = peer
                .notify_cancelled(CancelledNotificationParam::new(Some(id), reason))
                .await;
        });
    }
}

impl Shared {
    /// The answer to one request, `doing` naming it in errors. A server
    /// that stops answering is started again (or reconnected) at the next
    /// request; one that refuses stays.
    pub(super) async fn asked<T>(
        &self,
        generation: u64,
        doing: &str,
        request: impl Future<Output = Result<T, rmcp::ServiceError>>,
    ) -> Result<T, ClientError> {
        let answer = match self.timeout {
            Some(limit) => tokio::time::timeout(limit, request).await.map_err(|_| {
                self.error(format!(
                    "{doing}: no answer within {:.1} s",
                    limit.as_secs_f64()
                ))
            })?,
            None => request.await,
        };
        match answer {
            Ok(answer) => Ok(answer),
            Err(rmcp::ServiceError::McpError(error)) => Err(self.error(format!(
                "{doing} was refused: {} (JSON-RPC error {})",
                error.message, error.code.0
            ))),
            Err(error) => {
                self.forget(generation).await;
                Err(self.error(format!("{doing} failed: {error}")))
            }
        }
    }

    /// One request and its answer, in the request's `mcp.client` span,
    /// carrying the span's trace context; a request given up before its
    /// answer tells the server so.
    pub(super) async fn send(
        &self,
        peer: &Peer<RoleClient>,
        request: ClientRequest,
    ) -> Result<ServerResult, rmcp::ServiceError> {
        self.send_watched(peer, request, |_| ()).await.0
    }

    /// [`send`](Self::send), with `watch` given the request's handle once
    /// it is sent: what it makes (a progress tracker) is kept until the
    /// answer has come, and returned with it, none when the request could
    /// not be sent.
    pub(super) async fn send_watched<W>(
        &self,
        peer: &Peer<RoleClient>,
        mut request: ClientRequest,
        watch: impl FnOnce(&RequestHandle<RoleClient>) -> W,
    ) -> (Result<ServerResult, rmcp::ServiceError>, Option<W>) {
        let mut pending = Pending::new(telemetry::client_span(&request, &self.traced));
        telemetry::inject(&mut request, pending.span.as_ref());
        let sent = peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await;
        let handle = match pending.check(sent) {
            Ok(handle) => handle,
            Err(error) => return (Err(error), None),
        };
        pending.sent(peer, &handle.id);
        let watching = watch(&handle);
        let mut abandoned = Abandoned::new(peer, handle.id.clone());
        let answer = handle.await_response().await;
        abandoned.disarm();
        pending.answered(&answer);
        (answer, Some(watching))
    }

    /// Every page of a listing, each request sent by [`send`](Self::send).
    pub(super) async fn list_all<T>(
        &self,
        peer: &Peer<RoleClient>,
        request: fn(PaginatedRequestParams) -> ClientRequest,
        page: fn(ServerResult) -> Option<Page<T>>,
    ) -> Result<Vec<T>, rmcp::ServiceError> {
        let mut items = Vec::new();
        let mut cursor = None;
        for _ in 0..MAX_PAGES {
            let params = PaginatedRequestParams::default().with_cursor(cursor);
            let answer = self.send(peer, request(params)).await?;
            let (listed, next) = page(answer).ok_or(rmcp::ServiceError::UnexpectedResponse)?;
            items.extend(listed);
            cursor = next;
            if cursor.is_none() {
                return Ok(items);
            }
        }
        Err(rmcp::ServiceError::UnexpectedResponse)
    }

    /// Each listed item, read from its JSON form.
    pub(super) fn each<T: serde::Serialize, U>(
        &self,
        listed: &[T],
        read: fn(&Value) -> U,
    ) -> Vec<U> {
        listed
            .iter()
            .map(|item| read(&serde_json::to_value(item).unwrap_or_default()))
            .collect()
    }
}
