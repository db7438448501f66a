//! `fixture-badname`: an instrument that names itself with a path, for the
//! harness's own tests (names are checked before they touch the file
//! system). Not part of any board.

use sparktest_sdk::*;

struct BadName;

impl Instrument for BadName {
    type Config = NoConfig;

    fn describe() -> Info {
        Info::new("../../../tmp/escaped", "Harness self-test", env!("CARGO_PKG_VERSION"), "Names itself with a path.")
    }

    fn cases(_config: &NoConfig) -> Result<Vec<CaseInfo>, String> {
        Ok(vec![CaseInfo::new("write::snapshot")])
    }

    fn run(_config: &NoConfig, _case: &str) -> Outcome {
        Outcome::pass().snapshot("x", "escaped")
    }
}

register_instrument!(BadName);
