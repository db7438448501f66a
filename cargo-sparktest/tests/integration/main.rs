//! `cargo sparktest` end to end, against the real reference llama-server.

mod support;

mod cli;
mod lost;
mod sandbox;
mod smoke;
