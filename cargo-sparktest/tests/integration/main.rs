//! `cargo sparktest` end to end, against the real reference llama-server.

mod support;

mod agent;
mod board;
mod cli;
mod lost;
mod provision;
mod sandbox;
mod serving;
mod smoke;
mod webdriver;
