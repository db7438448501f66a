//! `cargo sparktest` end to end, against the real reference llama-server.

mod support;

#[path = "../../../harness/endpoint/tests/support/fake_server.rs"]
mod fake_server;

#[path = "../../../harness/benches/support/board_files.rs"]
mod board_files;

#[path = "../../../harness/benches/support/nights.rs"]
mod nights;

mod agent;
mod board;
mod bookkeeping;
mod campaign;
mod cli;
mod columns;
mod compliance;
mod components;
mod declared;
mod diff;
mod edges;
mod engines;
mod history;
mod install;
mod layout;
mod lost;
mod provision;
mod repeats;
mod sandbox;
mod selection;
mod serving;
mod slurm;
mod smoke;
mod sustained_load;
mod trust;
mod vision;
mod webdriver;
