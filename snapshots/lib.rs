//! No code: this package makes `cargo insta` look in `snapshots/`.
