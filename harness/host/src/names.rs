//! Names a plugin gives are not paths: an instrument's name, its case names
//! and arm names are checked before they touch the file system (snapshot
//! folders, transcripts, JUnit).

/// Each `::`-separated segment is `[a-z0-9][a-z0-9_-]*`.
pub fn check_segments(what: &str, name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.split("::").all(|seg| {
            let mut chars = seg.chars();
            chars.next().is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
                && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
        });
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{what} {name:?} is not a valid name: each ::-separated part must be lowercase letters, digits, '_' or '-', \
             starting with a letter or digit"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_could_be_paths_are_refused() {
        assert!(check_segments("case", "a-tool::007_weather_lookup").is_ok());
        for bad in ["../up", "/abs", "a::", "A", "a/b", "a::.hidden", "", "a b", "a::..::b"] {
            assert!(check_segments("case", bad).is_err(), "{bad:?}");
        }
    }
}
