//! Keys never reach a record, a board, a log line or an error: every text
//! the harness writes that could hold one passes through a [`Redactor`].

/// Replaces known secrets, and secrets in command-line flags, with
/// `[redacted]`.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

/// Flags whose value is a credential, as vLLM, SGLang and llama.cpp spell
/// them (and their like).
fn secret_flag(flag: &str) -> bool {
    let name = flag.trim_start_matches('-').to_ascii_lowercase();
    (flag.starts_with("--") || flag.starts_with('-'))
        && ["api-key", "api_key", "apikey", "token", "secret", "password", "passwd"].iter().any(|w| name.contains(w))
        && !name.ends_with("file")
}

impl Redactor {
    /// A redactor for these secrets (empty ones are ignored).
    pub fn new(secrets: impl IntoIterator<Item = String>) -> Self {
        let mut secrets: Vec<String> = secrets.into_iter().filter(|s| s.len() >= 4).collect();
        // Longest first, so a secret containing another is replaced whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        Redactor { secrets }
    }

    /// Add a secret.
    pub fn add(&mut self, secret: &str) {
        if secret.len() >= 4 && !self.secrets.iter().any(|s| s == secret) {
            self.secrets.push(secret.to_string());
            self.secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        }
    }

    /// A text with every known secret replaced.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for s in &self.secrets {
            if out.contains(s.as_str()) {
                out = out.replace(s.as_str(), "[redacted]");
            }
        }
        out
    }

    /// A command line with credential flags' values and known secrets
    /// replaced: `--api-key X`, `--api-key=X`, `--hf-token X` …
    pub fn redact_command(&self, argv: &[String]) -> Vec<String> {
        let mut out = Vec::with_capacity(argv.len());
        let mut next_is_secret = false;
        for arg in argv {
            if next_is_secret {
                out.push("[redacted]".to_string());
                next_is_secret = false;
                continue;
            }
            match arg.split_once('=') {
                Some((flag, _)) if secret_flag(flag) => out.push(format!("{flag}=[redacted]")),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_and_credential_flags_are_replaced() {
        let r = Redactor::new(["sk-planted-123".to_string()]);
        assert_eq!(r.redact("Bearer sk-planted-123 then"), "Bearer [redacted] then");
        let argv: Vec<String> = ["vllm", "serve", "m", "--api-key", "abc123", "--hf-token=hf_xyz", "--port", "8000", "--ssl-keyfile", "k.pem"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            r.redact_command(&argv),
            ["vllm", "serve", "m", "--api-key", "[redacted]", "--hf-token=[redacted]", "--port", "8000", "--ssl-keyfile", "k.pem"]
        );
        let llama: Vec<String> = ["llama-server", "--api-key", "sk-planted-123"].iter().map(|s| s.to_string()).collect();
        assert_eq!(r.redact_command(&llama)[2], "[redacted]");
        // A secret that appears inside another argument is replaced too.
        let inline: Vec<String> = ["env", "KEY=sk-planted-123"].iter().map(|s| s.to_string()).collect();
        assert_eq!(r.redact_command(&inline)[1], "KEY=[redacted]");
    }
}
