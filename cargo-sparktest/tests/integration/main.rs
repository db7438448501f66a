//! `cargo sparktest` end to end, against the real reference llama-server.

mod support;

use sparktest_test_support::fake_server;

use sparktest_test_support::board_files;

use sparktest_test_support::nights;

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
mod reduction;
mod repeats;
mod sandbox;
mod selection;
mod serving;
mod slurm;
mod smoke;
mod sustained_load;
mod tree;
mod trust;
mod vision;
mod webdriver;
