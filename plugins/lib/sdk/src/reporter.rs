//! Reporter plugins: turn measurement files into a board.
//!
//! A reporter is a component in the `reporter` world. It gets the text of
//! every measurement file (JSON Lines; parse them with `sparktest-record`)
//! and its config, and returns files. It has no endpoint: only
//! [`read_file`], for the files the host hands it (judgements, say).
//!
//! ```ignore
//! use sparktest_sdk::reporter::*;
//!
//! struct Count;
//!
//! impl Reporter for Count {
//!     fn render(measurements: &[String], _config: &str) -> Result<Vec<Artifact>, String> {
//!         Ok(vec![Artifact { path: "count.txt".into(), content: measurements.len().to_string().into_bytes() }])
//!     }
//! }
//!
//! register_reporter!(Count);
//! ```

#[doc(hidden)]
pub mod __private {
    //! Generated bindings. Not public API.
    wit_bindgen::generate!({
        path: "../../wit/since_v0.2.0",
        world: "reporter",
        pub_export_macro: true,
        export_macro_name: "__export_reporter",
        default_bindings_module: "sparktest_sdk::reporter::__private",
    });
}

pub use __private::sparktest::plugin::plugin_types::Artifact;

/// A reporter: measurement files in, board files out.
pub trait Reporter {
    /// Render `measurements` (each one whole measurement file's text, in the
    /// order the host read them) with `config` (JSON text).
    fn render(measurements: &[String], config: &str) -> Result<Vec<Artifact>, String>;
}

/// A file the host handed the reporter, by name.
pub fn read_file(path: &str) -> Result<Vec<u8>, String> {
    __private::sparktest::plugin::suite_data::read(path)
}

/// The names of the files the host handed the reporter.
pub fn list_files() -> Vec<String> {
    __private::sparktest::plugin::suite_data::paths()
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
                    <$reporter as $crate::reporter::Reporter>::render(&measurements, &config)
                }
            }
            $crate::reporter::__private::__export_reporter!(__SparktestReporter with_types_in $crate::reporter::__private);
        };
    };
}

pub use crate::register_reporter;
