//! The randomness test for values assigned to secret-looking names: a generated key
//! (`9f8e7d6c…`, `Zm9vYmFy…`, a UUID) looks random, a name (`acme.auth.accessTokenV2Storage`,
//! `EXAMPLE_PLACEHOLDER_TOKEN_VALUE`, `X509CertificateType2`) does not.
//!
//! Shannon entropy alone does not tell them apart at these lengths (a 30-character
//! identifier and a 30-character key both score near 4 bits a character), so the test
//! looks at what separates them: a name is made of words, runs of letters whose letter
//! pairs are common in English and code, while a random string switches between
//! lower case, upper case and digits every character or two and holds few such runs.

/// Shortest value judged: below this, a random-looking string is as likely a short id.
pub const MIN_LEN: usize = 10;

/// Common letter pairs of English and code identifiers (case-folded). A run of letters
/// counts as a word when most of its pairs are here; in random text about a sixth are.
const COMMON_PAIRS: &str = "th he in er an re on at en nd ti es or te of ed is it al ar st to nt ng se ha as ou io le ve co me de hi ri ro ic ne ea ra ce li ch ll be ma si om ur ca el ta la ns di fo ho pe ec pr no ct us ac ot il tr ly nc et ut ss so rs un lo wa ge ie wh ee wi em ad ol rt po we na ul ni ts mo ow pa im mi ai sh ir su id os iv ia am fi ci vi pl ig tu ev ld ry mp fe bl ab gh ty op wo sa ay ex ke fr oo av ag if ap gr od bo sp rd do uc bu ei ov by rm ep tt oc fa ef cu rn sc gi da yo cr cl du ga qu ue ff ba ey ls va um pp ua up lu go ht ru ug ds lt pi rc rr eg au ck ew mu br bi pt ak pu ui rg ib tl ny ki rk ys ob mm fu ph og ms ye ud mb ip ub oi rl gu dr hr cc tw ft wn nu af hu nn eo vo rv nf xp gn sm fl iz ok nl my gl aw ju oa eq sy sl ps jo rf na dy rb gs ks yp sk rp";

fn is_common_pair(a: u8, b: u8) -> bool {
    let pair = [a.to_ascii_lowercase(), b.to_ascii_lowercase()];
    COMMON_PAIRS
        .as_bytes()
        .chunks(3)
        .any(|chunk| chunk[..2] == pair)
}

/// Whether `value` looks like a generated secret rather than a name or a word.
pub fn looks_random(value: &str) -> bool {
    let bytes = value.as_bytes();
    if bytes.len() < MIN_LEN || bytes.len() > 1000 {
        return false;
    }
    if value.chars().any(char::is_whitespace) || value.contains("://") {
        return false;
    }
    if value.starts_with(['.', '~', '$', '%', '<', '{', '#']) {
        // A relative path, a reference (`$X`, `%(x)s`, `<your key>`, `{{ x }}`) or a
        // colour. (An absolute path is told by its words: base64 may start with `/`.)
        return false;
    }
    let alnum = bytes.iter().filter(|b| b.is_ascii_alphanumeric()).count();
    if alnum < 8 || alnum * 10 < bytes.len() * 7 {
        return false;
    }
    let lower = bytes.iter().filter(|b| b.is_ascii_lowercase()).count();
    let upper = bytes.iter().filter(|b| b.is_ascii_uppercase()).count();
    let digits = bytes.iter().filter(|b| b.is_ascii_digit()).count();
    let classes = [lower, upper, digits].iter().filter(|&&n| n > 0).count();
    if classes < 2 && alnum < 20 {
        return false;
    }
    if word_share(bytes, lower > 0) >= 0.5 {
        return false;
    }
    shannon_entropy(bytes) >= 3.0
}

/// The share of letters and digits that lie in words: runs of at least four letters (a
/// capital may open a lower-case run, `Storage`; an all-capital run counts only in a
/// value without lower case, `PLACEHOLDER_TOKEN`) most of whose pairs are common.
fn word_share(bytes: &[u8], has_lower: bool) -> f64 {
    let mut in_words = 0usize;
    let mut alnum = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if !b.is_ascii_alphanumeric() {
            i += 1;
            continue;
        }
        if b.is_ascii_digit() {
            alnum += 1;
            i += 1;
            continue;
        }
        let start = i;
        let run_end = if b.is_ascii_uppercase() && has_lower {
            // `Storage`: one capital, then lower case. `XMLHttp` splits as `XML`, `Http`.
            let mut j = i + 1;
            while j < bytes.len() && bytes[j].is_ascii_lowercase() {
                j += 1;
            }
            j
        } else if b.is_ascii_uppercase() {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j].is_ascii_uppercase() {
                j += 1;
            }
            j
        } else {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j].is_ascii_lowercase() {
                j += 1;
            }
            j
        };
        let run = &bytes[start..run_end];
        alnum += run.len();
        if is_word(run) {
            in_words += run.len();
        }
        i = run_end;
    }
    if alnum == 0 {
        return 1.0;
    }
    in_words as f64 / alnum as f64
}

/// A run of letters reads as a word: four or more letters, at least two thirds of its
/// pairs common, a vowel, no five consonants in a row (`strength` has four). Random
/// letters pass the pair test alone about a third of the time; all three, rarely.
fn is_word(run: &[u8]) -> bool {
    if run.len() < 4 {
        return false;
    }
    let pairs = run.len() - 1;
    let common = run
        .windows(2)
        .filter(|w| is_common_pair(w[0], w[1]))
        .count();
    let is_vowel = |b: &u8| b"aeiouy".contains(&b.to_ascii_lowercase());
    let vowels = run.iter().filter(|b| is_vowel(b)).count();
    let consonant_run = run.split(is_vowel).map(<[u8]>::len).max().unwrap_or(0);
    common * 3 >= pairs * 2 && vowels > 0 && consonant_run < 5
}

/// Bits per byte.
pub fn shannon_entropy(bytes: &[u8]) -> f64 {
    let mut counts = [0usize; 256];
    for &b in bytes {
        counts[b as usize] += 1;
    }
    let n = bytes.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_values_look_random_and_names_do_not() {
        for random in [
            "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
            "Zm9vYmFyYmF6cXV4cXV1eDEyMzQ1Ng",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "a8F5f167f44f4964e6c998dee827110c",
            "550e8400-e29b-41d4-a716-446655440000",
            "k3j4h5lkjqwe8r7t6yzx",
            "Q2xpZW50U2VjcmV0VmFsdWU9",
        ] {
            assert!(looks_random(random), "{random}");
        }
        for name in [
            "acme.auth.accessTokenV2Storage",
            "EXAMPLE_PLACEHOLDER_TOKEN_VALUE",
            "X509CertificateSecretType2",
            "my-token-name-v1",
            "bert-base-uncased",
            "TOKEN_KIND_IDENTIFIER_2",
            "refresh_token_expiry_seconds",
            "aaaaaaaaaaaaaaaaaaaa",
            "1234567890123456",
            "${SECRET_KEY_BASE}",
            "/var/run/secrets/token",
            "short1A",
            "NumberOrString",
            "StrengthMeterRhythm",
        ] {
            assert!(!looks_random(name), "{name}");
        }
    }
}
