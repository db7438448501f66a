//! `cargo sparktest` end to end, against the real reference llama-server.

mod support;

mod agent;
mod cli;
mod lost;
mod sandbox;
mod serving;
mod smoke;
