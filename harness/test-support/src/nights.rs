//! Nights of measurement files: one night's files (as
//! `board_files::write` wrote them) written again at any later night's
//! dates, with their run ids, groups and times moved along. A year of
//! nightly campaigns is one night moved day by day: the board's year
//! benchmark (`harness/host/benches/board_year.rs`) and its browser test.

use std::path::Path;

/// One night's files, to be written again at any night's dates: a year
/// of nightly campaigns is this night moved day by day (the board's year
/// benchmark and its browser test).
pub struct Night {
    files: Vec<(String, String)>,
}

impl Night {
    /// The files of a folder, as `board_files::write` wrote them.
    pub fn read(dir: &Path) -> Night {
        let mut files: Vec<(String, String)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
            .collect();
        files.sort();
        Night { files }
    }

    /// The night `k` days after the first into `dir`: every date in its
    /// names and texts (`20261101T`, `2026-11-01T`) moved, and with them
    /// its run ids, groups and times.
    pub fn write(&self, dir: &Path, k: u32) {
        std::fs::create_dir_all(dir).unwrap();
        for (name, text) in &self.files {
            std::fs::write(dir.join(moved(name, k)), moved(text, k)).unwrap();
        }
    }
}

/// `s` with every `2026MMDDT` and `2026-MM-DDT` moved `k` days on.
fn moved(s: &str, k: u32) -> String {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    let mut out = String::with_capacity(s.len());
    let (mut from, mut at) = (0, 0);
    while let Some(i) = s[at..].find("2026").map(|i| at + i) {
        let dashed = b.get(i + 4) == Some(&b'-')
            && digits(i + 5..i + 7)
            && b.get(i + 7) == Some(&b'-')
            && digits(i + 8..i + 10)
            && b.get(i + 10) == Some(&b'T');
        let compact = digits(i + 4..i + 8) && b.get(i + 8) == Some(&b'T');
        let (m, d, len) = match (dashed, compact) {
            (true, _) => (&s[i + 5..i + 7], &s[i + 8..i + 10], 11),
            (_, true) => (&s[i + 4..i + 6], &s[i + 6..i + 8], 9),
            _ => {
                at = i + 4;
                continue;
            }
        };
        let (y, m, d) = days_to_date(date_to_days(2026, m.parse().unwrap(), d.parse().unwrap()) + i64::from(k));
        out.push_str(&s[from..i]);
        out.push_str(&if dashed { format!("{y:04}-{m:02}-{d:02}T") } else { format!("{y:04}{m:02}{d:02}T") });
        from = i + len;
        at = from;
    }
    out.push_str(&s[from..]);
    out
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`).
fn date_to_days(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day since 1970-01-01 (`civil_from_days`).
fn days_to_date(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}
