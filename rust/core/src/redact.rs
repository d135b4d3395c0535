//! Which keys of a context's `deps` never reach a file or a store: a key whose words
//! name a credential. Words split at non-alphanumerics and at lower→upper case changes, so
//! `apiKey`, `API_KEY` and `api-key` are all `api key`; `max_tokens` is `max tokens`, not secret.

const SECRET_WORDS: [&str; 14] = [
    "secret",
    "secrets",
    "password",
    "passwords",
    "passwd",
    "token",
    "apikey",
    "privatekey",
    "accesskey",
    "credential",
    "credentials",
    "bearer",
    "authorization",
    "auth",
];
const SECRET_PAIRS: [(&str, &str); 3] = [("api", "key"), ("private", "key"), ("access", "key")];

/// The lowercased words of a key.
pub fn key_words(key: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut prev: Option<char> = None;
    for c in key.chars() {
        if !c.is_ascii_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            prev = None;
            continue;
        }
        let camel_break = c.is_ascii_uppercase()
            && prev.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit());
        if camel_break && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        word.push(c.to_ascii_lowercase());
        prev = Some(c);
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

pub fn is_secret_key(key: &str) -> bool {
    let words = key_words(key);
    words.iter().any(|w| SECRET_WORDS.contains(&w.as_str()))
        || words
            .windows(2)
            .any(|p| SECRET_PAIRS.contains(&(p[0].as_str(), p[1].as_str())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_secrets() {
        assert_eq!(key_words("apiKey"), ["api", "key"]);
        assert_eq!(key_words("AUTH_TOKEN"), ["auth", "token"]);
        assert_eq!(key_words("max_tokens"), ["max", "tokens"]);
        assert_eq!(key_words("x2Y--z"), ["x2", "y", "z"]);
        for k in [
            "apiKey",
            "API_KEY",
            "password",
            "my-secret",
            "accessKey",
            "Authorization",
        ] {
            assert!(is_secret_key(k), "{k}");
        }
        for k in ["max_tokens", "key", "user", "tokens", "keyboard", "monkey"] {
            assert!(!is_secret_key(k), "{k}");
        }
    }
}
