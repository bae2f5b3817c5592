//! The redaction's unit tests: the cases kept from the first hand-kept list, line
//! structure, and the key blocks read in part.

use super::*;

const PEM: &str = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi8\nZ1vF3p0qQ2x9Yw==\n-----END RSA PRIVATE KEY-----\n";

#[test]
fn secrets_are_replaced_by_markers() {
    let cases: &[(&str, &str)] = &[
        (PEM, "[redacted: private key]\n\n\n\n"),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----",
            "[redacted: private key]\n\n",
        ),
        (
            r#"{"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"}"#,
            r#"{"private_key": "[redacted: private key]\n"}"#,
        ),
        ("key = AKIAIOSFODNN7EXAMPLE", "key = [redacted: aws access key]"),
        ("ASIAY34FZKBOKMUTVV7A.", "[redacted: aws access key]."),
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws_secret_access_key = [redacted: aws secret key]",
        ),
        (
            "GITHUB_TOKEN=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",
            "GITHUB_TOKEN=[redacted: github token]",
        ),
        (
            "gho_16C7e42F292c6912E7710c838347Ae178B4a ghs_16C7e42F292c6912E7710c838347Ae178B4a",
            "[redacted: github token] [redacted: github token]",
        ),
        (
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWX",
            "[redacted: github token]",
        ),
        (
            "client = OpenAI(api_key=\"sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXyZ0aBcD\")",
            "client = OpenAI(api_key=\"[redacted: openai key]\")",
        ),
        (
            "sk-T3BlbkFJabc123DEF456ghi789JKL012mno345PQR",
            "[redacted: openai key]",
        ),
        (
            "ANTHROPIC_API_KEY=sk-ant-api03-Xy9_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789-AA",
            "ANTHROPIC_API_KEY=[redacted: anthropic key]",
        ),
        (
            "token: xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
            "token: [redacted: slack token]",
        ),
        (
            "DB_PASSWORD=hunter2hunter2Xy9Q",
            "DB_PASSWORD=[redacted: password]",
        ),
        (
            r#"  "api_key": "a8F5f167f44f4964e6c998dee827110c","#,
            r#"  "api_key": "[redacted: secret]","#,
        ),
        (
            "secret: 'Zm9vYmFyYmF6cXV4cXV1eDEyMzQ1Ng'",
            "secret: '[redacted: secret]'",
        ),
        (
            "let client_secret = \"9f8e7d6c5b4a39281706f5e4d3c2b1a0\";",
            "let client_secret = \"[redacted: secret]\";",
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(redact(input), *expected, "{input}");
    }
}

#[test]
fn ordinary_code_is_left_alone() {
    for code in [
        "let token = tokens.next_token_or_eof2();",
        "token_type = TokenType::IdentifierWithVeryLongName",
        "max_tokens: 4096,",
        "password: String,",
        "const BEGIN: &str = \"-----BEGIN PRIVATE KEY-----\";",
        "if line.starts_with(\"-----BEGIN RSA PRIVATE KEY-----\") {",
        "let pem = b\"-----BEGIN RSA PRIVATE KEY-----\\n\\\n    -----END RSA PRIVATE KEY-----\\n\";",
        "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----\n",
        "let secret = compute_secret(&key_material_2024);",
        "api_key: Option<ApiKey>,",
        "secret_key_base = \"${SECRET_KEY_BASE}\"",
        "token = \"EXAMPLE_PLACEHOLDER_TOKEN_VALUE\"",
        "sk-fading-circle-animation-keyframes",
        "TOKEN_KIND_IDENTIFIER_2 = 7",
        "refresh_token_expiry_seconds = 3600",
        "checksum = \"88f3f8ec0dcfdda4d908bad2882fe0f89cf2b606e78d16491323e918dfa95765\"",
        "let access_key = self.credentials.access_key_id_v2;",
        "AKIA", // too short to be a key id
        "pub const PrivateKeyAttestMask: X509CertificateTemplatePrivateKeyFlag = 12288i32;",
        "fn f(secret: X509CertificateSecretType2, token: Tok3nTypeWithDigits) {}",
    ] {
        assert_eq!(redact(code), code, "{code}");
    }
}

#[test]
fn line_numbers_before_key_lines_are_kept() {
    let numbered: String = PEM
        .lines()
        .enumerate()
        .map(|(i, line)| format!("{}\t{line}\n", i + 10))
        .collect();
    assert_eq!(
        redact(&numbered),
        "10\t[redacted: private key]\n11\t\n12\t\n13\t\n"
    );
    let searched = "keys/dev.pem:1: -----BEGIN PRIVATE KEY-----\nkeys/dev.pem:2: MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n";
    assert_eq!(
        redact(searched),
        "keys/dev.pem:1: [redacted: private key]\nkeys/dev.pem:2: \n"
    );
}

#[test]
fn a_key_block_cut_short_ends_at_the_first_line_that_is_not_key() {
    let cut = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nfn main() {}\n";
    assert_eq!(redact(cut), "[redacted: private key]\n\nfn main() {}\n");
}

#[test]
fn text_without_secrets_is_borrowed() {
    assert!(matches!(redact("fn main() {}\n"), Cow::Borrowed(_)));
}
