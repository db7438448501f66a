//! The OpenAI-compatible HTTP client: chat and completions, streamed or not.
//!
//! Classification is the point of this module. A call ends in a
//! [`Reply`](crate::types::Reply), or in
//! [`Lost`](crate::types::CallError::Lost) (refused or reset connection,
//! timeout, a stall between bytes, a stream cut before its finish reason, a
//! reply over its size cap, a body that is not the JSON the protocol
//! promises, a protocol break, a reply from another model than the
//! target's), in [`Unanswered`](crate::types::CallError::Unanswered) (a
//! 5xx, a 404/405/409, or a 408/429/503 that outlasted the retries), in
//! [`Unauthorized`](crate::types::CallError::Unauthorized) (401/403/407:
//! the setup's fault) or in [`Rejected`](crate::types::CallError::Rejected)
//! (400, 413 or 422, about the request itself: a clean refusal, with its
//! body).
//!
//! Every limit is explicit ([`ClientConfig`]): the server is untrusted input.
//!
//! `call.rs` holds the [`Client`] and its calls; `transport.rs` sending,
//! limits, retries and status classes; `body.rs` request bodies; `reply.rs`
//! whole replies; `stream.rs` the SSE read loop.

mod body;
mod call;
mod reply;
mod stream;
mod transport;

pub use body::{chat_body, completion_body};
pub use call::Client;
use call::{Shape, another_model, clip};
pub(crate) use call::{millis, millis_at};
pub use transport::{ClientConfig, RetryBudget, Secret, Sends, Timeouts, http_builder, redact_url};
