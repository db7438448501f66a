//! Keys never reach a record, a board, a log line or an error: every text
//! the harness writes that could hold one passes through a [`Redactor`].

/// Replaces known secrets, and secrets in command-line flags, with
/// `[redacted]`.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

/// The run's redactor, for the lines printed on stderr (warnings and
/// errors included): set once the keys are known.
static PRINTED: std::sync::RwLock<Option<Redactor>> = std::sync::RwLock::new(None);

/// Make `redactor` the one every printed line passes (it only ever grows:
/// the secrets are added to those already known).
pub fn set_printed(redactor: &Redactor) {
    let mut slot = PRINTED.write().unwrap_or_else(|p| p.into_inner());
    let mut merged = slot.take().unwrap_or_default();
    for s in &redactor.secrets {
        merged.add(s);
    }
    *slot = Some(merged);
}

/// `text` as it may be printed: with every key the run knows redacted.
pub fn printed(text: &str) -> String {
    match PRINTED.read().unwrap_or_else(|p| p.into_inner()).as_ref() {
        Some(r) => r.redact(text),
        None => text.to_string(),
    }
}

/// Print one line on stderr, redacted, and its foreign text made safe to
/// print ([`sparktest_record::foreign::shown`]): a line may hold a model
/// name, an error body, a file name or a reason from a measurements folder.
#[macro_export]
macro_rules! warn_line {
    ($($arg:tt)*) => {
        eprintln!("{}", $crate::redact::shown(&format!($($arg)*)))
    };
}

/// `text` redacted ([`printed`]) and safe to print on a terminal or a CI
/// log ([`sparktest_record::foreign::shown`]).
pub fn shown(text: &str) -> String {
    sparktest_record::foreign::shown(&printed(text)).into_owned()
}

/// Secrets shorter than this are not searched for: a key like `none` or
/// `true` would otherwise rewrite ordinary words (and such a key is no
/// secret).
pub const MIN_SECRET: usize = 8;

/// Whether a flag's value is a credential, as vLLM, SGLang and llama.cpp
/// spell them: its last word is `token`, `secret`, `password` … or it ends
/// in `api-key` (`--api-key`, `--hf-token`, `--admin-api-key`), never a
/// flag that only mentions tokens (`--max-num-batched-tokens`,
/// `--skip-tokenizer-init`, `--ssl-keyfile`).
fn secret_flag(flag: &str) -> bool {
    flag.starts_with('-') && secret_name(flag.trim_start_matches('-'))
}

/// An environment assignment's name that holds a credential, as in
/// `env HF_TOKEN=… vllm serve`: upper case, the same last words.
fn secret_env(name: &str) -> bool {
    !name.is_empty()
        && name.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        && secret_name(name)
}

fn secret_name(name: &str) -> bool {
    let words: Vec<String> = name.split(['-', '_']).map(str::to_ascii_lowercase).collect();
    let last = words.last().map(String::as_str).unwrap_or("");
    ["token", "secret", "password", "passwd", "apikey"].contains(&last)
        || (last == "key" && words.len() >= 2 && words[words.len() - 2] == "api")
}

impl Redactor {
    /// A redactor for these secrets (too-short ones are ignored).
    #[cfg(test)]
    pub fn new(secrets: impl IntoIterator<Item = String>) -> Self {
        let mut r = Redactor::default();
        for s in secrets {
            r.add(&s);
        }
        r
    }

    /// Add a secret; false when it is too short to be searched for.
    pub fn add(&mut self, secret: &str) -> bool {
        if secret.len() < MIN_SECRET {
            return false;
        }
        if !self.secrets.iter().any(|s| s == secret) {
            self.secrets.push(secret.to_string());
            // Longest first, so a secret containing another is replaced whole.
            self.secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        }
        true
    }

    /// A text with every known secret replaced, in any of its spellings:
    /// as is, JSON-escaped (`sk\u002d…`, a character or all of them, hex
    /// in any case, the backslash doubled by a further JSON layer) or
    /// percent-encoded (`sk%2D…`, any case): a server that echoes the key
    /// in an error body may spell it any of these ways.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for s in &self.secrets {
            if out.contains(s.as_str()) {
                out = out.replace(s.as_str(), "[redacted]");
            }
            // Every other spelling holds a backslash or a percent sign.
            if out.contains(['\\', '%']) {
                out = replace_spellings(&out, s);
            }
        }
        out
    }

    /// Every string inside a JSON value redacted (keys and structure kept:
    /// the result is still valid JSON).
    pub fn redact_json(&self, value: &mut serde_json::Value) {
        use serde_json::Value;
        if self.secrets.is_empty() {
            return;
        }
        match value {
            Value::String(s) => *s = self.redact(s),
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_json(v)),
            Value::Object(map) => map.values_mut().for_each(|v| self.redact_json(v)),
            _ => {}
        }
    }

    /// `value` as JSON with every secret replaced in its strings, in its
    /// own field order: a secret is never searched for in the JSON text
    /// (where an escape could hide or split it), only in the strings, and
    /// the redacted tree is read back into `T` so the fields keep the order
    /// of the type instead of a map's.
    pub fn to_json<T: serde::Serialize + serde::de::DeserializeOwned>(
        &self,
        value: &T,
        pretty: bool,
    ) -> serde_json::Result<String> {
        let write = |v: &T| if pretty { serde_json::to_string_pretty(v) } else { serde_json::to_string(v) };
        if self.secrets.is_empty() {
            return write(value);
        }
        let mut tree = serde_json::to_value(value)?;
        self.redact_json(&mut tree);
        write(&serde_json::from_value(tree)?)
    }

    /// A command line with credential flags' values and known secrets
    /// replaced: `--api-key X`, `--api-key=X`, `--hf-token X` …
    pub fn redact_command(&self, argv: &[String]) -> Vec<String> {
        let mut out = Vec::with_capacity(argv.len());
        let mut next_is_secret = false;
        for arg in argv {
            if next_is_secret && !arg.starts_with('-') {
                out.push("[redacted]".to_string());
                next_is_secret = false;
                continue;
            }
            next_is_secret = false;
            match arg.split_once('=') {
                Some((flag, _)) if secret_flag(flag) || secret_env(flag) => out.push(format!("{flag}=[redacted]")),
                _ if secret_flag(arg) => {
                    out.push(arg.clone());
                    next_is_secret = true;
                }
                _ => out.push(self.redact(arg)),
            }
        }
        out
    }
}

/// `text` with every spelling of `secret` that escapes a character
/// replaced (the plain one is replaced before).
fn replace_spellings(text: &str, secret: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        if let Some(n) = spelled_at(&bytes[i..], secret) {
            out.push_str("[redacted]");
            i += n;
            continue;
        }
        // Spellings start at a character: copy this one whole.
        let len = text[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&text[i..i + len]);
        i += len;
    }
    out
}

/// The length in bytes of a spelling of `secret` at the start of `text`.
fn spelled_at(text: &[u8], secret: &str) -> Option<usize> {
    let mut at = 0;
    for c in secret.chars() {
        at += char_at(&text[at..], c)?;
    }
    Some(at)
}

/// The length of one spelling of `c` at the start of `text`: itself, a
/// JSON escape (`\uXXXX`, a surrogate pair beyond the BMP, `\/` for a
/// slash; one backslash or more), or its UTF-8 bytes percent-encoded.
fn char_at(text: &[u8], c: char) -> Option<usize> {
    let mut utf8 = [0u8; 4];
    let plain = c.encode_utf8(&mut utf8).as_bytes();
    if text.starts_with(plain) {
        return Some(plain.len());
    }
    match text.first()? {
        b'\\' => {
            let mut units = [0u16; 2];
            let mut at = 0;
            for unit in c.encode_utf16(&mut units).iter() {
                let slashes = text[at..].iter().take_while(|&&b| b == b'\\').count();
                if slashes == 0 {
                    return None;
                }
                at += slashes;
                if c == '/' && text.get(at) == Some(&b'/') {
                    return Some(at + 1);
                }
                if text.get(at) != Some(&b'u') || hex_at(text, at + 1, 4)? != u32::from(*unit) {
                    return None;
                }
                at += 5;
            }
            Some(at)
        }
        b'%' => {
            let mut at = 0;
            for byte in plain {
                if text.get(at) != Some(&b'%') || hex_at(text, at + 1, 2)? != u32::from(*byte) {
                    return None;
                }
                at += 3;
            }
            Some(at)
        }
        _ => None,
    }
}

/// The value of `digits` hex digits (any case) at `text[at..]`.
fn hex_at(text: &[u8], at: usize, digits: usize) -> Option<u32> {
    let hex = std::str::from_utf8(text.get(at..at + digits)?).ok()?;
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(hex, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn secrets_and_credential_flags_are_replaced() {
        let r = Redactor::new(["sk-planted-123".to_string()]);
        assert_eq!(r.redact("Bearer sk-planted-123 then"), "Bearer [redacted] then");
        let cmd = argv(&[
            "vllm",
            "serve",
            "m",
            "--api-key",
            "abc123",
            "--hf-token=hf_xyz",
            "--port",
            "8000",
            "--ssl-keyfile",
            "k.pem",
        ]);
        assert_eq!(
            r.redact_command(&cmd),
            [
                "vllm",
                "serve",
                "m",
                "--api-key",
                "[redacted]",
                "--hf-token=[redacted]",
                "--port",
                "8000",
                "--ssl-keyfile",
                "k.pem"
            ]
        );
        assert_eq!(r.redact_command(&argv(&["llama-server", "--api-key", "sk-planted-123"]))[2], "[redacted]");
        // A secret inside another argument is replaced too.
        assert_eq!(r.redact_command(&argv(&["env", "KEY=sk-planted-123"]))[1], "KEY=[redacted]");
        // So is an environment assignment that names a credential.
        let env =
            r.redact_command(&argv(&["env", "HF_TOKEN=hf_unknown", "VLLM_API_KEY=abc", "CUDA_VISIBLE_DEVICES=0"]));
        assert_eq!(env, ["env", "HF_TOKEN=[redacted]", "VLLM_API_KEY=[redacted]", "CUDA_VISIBLE_DEVICES=0"]);
    }

    #[test]
    fn flags_that_only_mention_tokens_are_left_alone() {
        let r = Redactor::default();
        let cmd = argv(&[
            "vllm",
            "--max-num-batched-tokens",
            "8192",
            "--skip-tokenizer-init",
            "--port",
            "8000",
            "--return-tokens-as-token-ids",
            "--tokenizer",
            "t",
        ]);
        assert_eq!(r.redact_command(&cmd), cmd);
    }

    #[test]
    fn json_stays_json_and_short_keys_are_not_searched() {
        let mut r = Redactor::default();
        assert!(!r.add("true"), "too short to be a secret");
        assert!(r.add("sk-planted-123"));
        let mut v = serde_json::json!({"unified_memory": true, "reason": "HTTP 401 for key sk-planted-123", "list": ["sk-planted-123"]});
        r.redact_json(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"unified_memory": true, "reason": "HTTP 401 for key [redacted]", "list": ["[redacted]"]})
        );
    }

    /// A key a server echoes in an error body, in every spelling it may
    /// take: JSON escapes (one character or all, hex in either case, the
    /// backslash doubled by a second JSON layer, a slash as `\/`) and
    /// percent-encoding (either case, multi-byte characters byte by byte).
    #[test]
    fn a_key_in_every_spelling_of_an_error_body_is_replaced() {
        let key = "sk-planted-4f1c/2e";
        let r = Redactor::new([key.to_string()]);
        let escaped_all: String = key.chars().map(|c| format!("\\u{:04X}", c as u32)).collect();
        let percent_all: String = key.bytes().map(|b| format!("%{b:02x}")).collect();
        for spelling in [
            key.to_string(),
            r"sk\u002dplanted\u002d4f1c/2e".to_string(),
            r"sk\u002Dplanted-4f1c\/2e".to_string(),
            escaped_all,
            r"sk\\u002dplanted\\u002D4f1c\\/2e".to_string(),
            "sk%2Dplanted%2d4f1c%2F2e".to_string(),
            percent_all,
        ] {
            let body = format!(r#"HTTP 400: {{"error":{{"message":"invalid api key: {spelling}","type":"auth"}}}}"#);
            let out = r.redact(&body);
            assert_eq!(
                out, r#"HTTP 400: {"error":{"message":"invalid api key: [redacted]","type":"auth"}}"#,
                "{spelling}"
            );
        }
        // Through a record's JSON: the string holds the escape, the file
        // holds it escaped again; neither keeps the key.
        let mut v = serde_json::json!({"reason": r#"HTTP 400: {"key":"sk\u002dplanted\u002d4f1c\/2e"}"#});
        r.redact_json(&mut v);
        assert_eq!(v["reason"], r#"HTTP 400: {"key":"[redacted]"}"#);
        // Beyond ASCII: UTF-8 bytes percent-encoded, a surrogate pair.
        let r = Redactor::new(["kéy-🔑-planted".to_string()]);
        assert_eq!(r.redact("a k%C3%A9y-%F0%9F%94%91-planted b"), "a [redacted] b");
        assert_eq!(r.redact(r"a k\u00e9y-\uD83D\uDD11-planted b"), "a [redacted] b");
        // Near misses and ordinary escapes are left as they are.
        let r = Redactor::new([key.to_string()]);
        for text in [r"sk\u002eplanted-4f1c/2e", "sk%2Eplanted-4f1c/2e", r"100% \n sk\u00", "sk%2", "%"] {
            assert_eq!(r.redact(text), text);
        }
    }

    /// Records keep their fields in the type's order, redacted or not.
    #[test]
    fn typed_json_keeps_field_order() {
        #[derive(serde::Serialize, serde::Deserialize)]
        struct Line {
            r#type: String,
            data: String,
        }
        let line = Line { r#type: "case".into(), data: "key sk-planted-123 \\n".into() };
        let plain = Redactor::default().to_json(&line, false).unwrap();
        assert!(plain.starts_with("{\"type\":\"case\""), "{plain}");
        let mut r = Redactor::default();
        r.add("sk-planted-123");
        let redacted = r.to_json(&line, false).unwrap();
        assert_eq!(redacted, "{\"type\":\"case\",\"data\":\"key [redacted] \\\\n\"}");
    }
}
