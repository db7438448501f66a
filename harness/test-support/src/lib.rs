//! What the workspace's tests and benchmarks share, as a crate of its own
//! rather than files included by path:
//!
//! - [`fake_server`]: a scripted HTTP/1.1 server on loopback, for the
//!   faults a real engine cannot be made to produce on demand (a cut
//!   stream, a reset, a stall, a status);
//! - [`board_files`]: the seeded measurement files of a 31-configuration
//!   board (the board benchmark and its browser test);
//! - [`nights`]: a night of those files written again at later dates (the
//!   year benchmark and its browser test).
//!
//! Never published: a dev-dependency only.

pub mod board_files;
pub mod fake_server;
pub mod nights;
