//! Reporter plugins: turn measurement files into a board.
//!
//! A reporter is a component in the `reporter` world. It gets the text of
//! every measurement file (JSON Lines; parse them with `sparktest-record`)
//! and its config, typed as an instrument's is, and returns files. It has no
//! endpoint: only the files the host hands it beside them, read typed
//! with [`handover()`] (the files it could not read whole, the selection,
//! the nights it folded into counts, the user's judgements: the types of
//! `sparktest_record::handover`), or one by one with [`read_file`].
//!
//! ```ignore
//! use sparktest_sdk::reporter::*;
//!
//! struct Count;
//!
//! impl Reporter for Count {
//!     type Config = sparktest_sdk::NoConfig;
//!     fn render(measurements: &[String], _config: &Self::Config) -> Result<Vec<Artifact>, String> {
//!         let handed = handover()?;
//!         let text = format!(
//!             "{} runs read whole, {} more of the latest night in the run log, {} files damaged\n",
//!             measurements.len(),
//!             handed.logged.len(),
//!             handed.damage.len()
//!         );
//!         Ok(vec![Artifact { path: "count.txt".into(), content: text.into_bytes() }])
//!     }
//! }
//!
//! register_reporter!(Count);
//! ```

#[doc(hidden)]
pub mod __private {
    //! Generated bindings. Not public API.
    wit_bindgen::generate!({
        path: "wit/since_v0.5.0",
        world: "reporter",
        pub_export_macro: true,
        export_macro_name: "__export_reporter",
        default_bindings_module: "sparktest_sdk::reporter::__private",
    });
}

pub use __private::sparktest::plugin::plugin_types::Artifact;

/// A reporter: measurement files in, board files out.
pub trait Reporter {
    /// The reporter's config (`board --config FILE`, TOML), parsed before
    /// `render` is called, an empty table when there is none: a field that
    /// does not fit is refused naming it, as an instrument's is.
    type Config: serde::de::DeserializeOwned;
    /// Render `measurements` (each one whole measurement file's text, in the
    /// order the host read them) with its config.
    fn render(measurements: &[String], config: &Self::Config) -> Result<Vec<Artifact>, String>;
}

/// A file the host handed the reporter, by name.
pub fn read_file(path: &str) -> Result<Vec<u8>, String> {
    __private::sparktest::plugin::suite_data::read(path)
}

/// The names of the files the host handed the reporter.
pub fn list_files() -> Vec<String> {
    __private::sparktest::plugin::suite_data::paths()
}

pub use sparktest_record::handover::{self, Handover};

/// What the host handed over besides the measurement files, typed
/// ([`Handover`]); a part it did not hand over is empty. A file that does
/// not parse is an error naming it.
pub fn handover() -> Result<Handover, String> {
    let files = list_files();
    Handover::read(|name| if files.iter().any(|f| f == name) { read_file(name).map(Some) } else { Ok(None) })
}

/// Register the type implementing [`Reporter`] as this component's export.
#[macro_export]
macro_rules! register_reporter {
    ($reporter:ty) => {
        const _: () = {
            struct __SparktestReporter;
            impl $crate::reporter::__private::Guest for __SparktestReporter {
                fn render(
                    measurements: ::std::vec::Vec<::std::string::String>,
                    config: ::std::string::String,
                ) -> ::std::result::Result<::std::vec::Vec<$crate::reporter::Artifact>, ::std::string::String> {
                    let config = $crate::__parse_config::<<$reporter as $crate::reporter::Reporter>::Config>(
                        "reporter",
                        &config,
                    )?;
                    <$reporter as $crate::reporter::Reporter>::render(&measurements, &config)
                }
            }
            $crate::reporter::__private::__export_reporter!(__SparktestReporter with_types_in $crate::reporter::__private);
        };
    };
}

pub use crate::register_reporter;
