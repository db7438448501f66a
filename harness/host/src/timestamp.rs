//! Timestamps as the harness writes them: RFC 3339 UTC to the second in
//! records and journals, and the same instant without separators in run and
//! campaign ids (and so in file names).

use std::time::SystemTime;

/// RFC 3339 UTC, seconds precision: `2026-12-02T18:44:01Z`.
pub fn rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

/// The same instant for an id: `20261202T184401`.
pub fn compact(t: SystemTime) -> String {
    rfc3339(t).replace([':', '-'], "").trim_end_matches('Z').to_string()
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;

    #[test]
    fn an_instant_is_written_to_the_second_in_utc_and_compacted_for_ids() {
        let t = UNIX_EPOCH + Duration::from_millis(1_796_237_041_750);
        assert_eq!(rfc3339(t), "2026-12-02T18:44:01Z");
        assert_eq!(compact(t), "20261202T184401");
    }
}
