//! One realistic snippet per language, its definitions written out one per line as
//! `doc_line-line-end_line kind qualified_name | label | signature` (1-based lines),
//! indented by depth, so a change in what is found reads as a diff.

use super::*;

fn render(text: &str, language: Language) -> String {
    let symbols = symbols(text, language).expect("parses");
    let mut out = String::new();
    for symbol in symbols {
        out.push_str(&format!(
            "{}{}-{}-{} {} {} | {} | {}\n",
            "  ".repeat(symbol.depth),
            symbol.doc_line + 1,
            symbol.line + 1,
            symbol.end_line + 1,
            symbol.kind.as_str(),
            symbol.qualified_name,
            symbol.label,
            symbol.signature
        ));
    }
    out
}

fn check(language: Language, text: &str, expected: &str) {
    let actual = render(text, language);
    let expected = expected
        .lines()
        .map(str::trim_end)
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.strip_prefix("        ").unwrap_or(line))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(actual.trim_end(), expected, "\nactual:\n{actual}");
}

#[test]
fn every_query_compiles_against_its_grammar() {
    for language in Language::ALL {
        assert!(language.query().is_some(), "{}", language.name());
    }
}

#[test]
fn languages_by_extension() {
    let cases = [
        ("src/lib.rs", Some(Language::Rust)),
        ("a/b.py", Some(Language::Python)),
        ("stubs.pyi", Some(Language::Python)),
        ("x.JS", Some(Language::JavaScript)),
        ("x.mjs", Some(Language::JavaScript)),
        ("x.cjs", Some(Language::JavaScript)),
        ("x.jsx", Some(Language::JavaScript)),
        ("x.ts", Some(Language::TypeScript)),
        ("x.mts", Some(Language::TypeScript)),
        ("x.cts", Some(Language::TypeScript)),
        ("x.tsx", Some(Language::Tsx)),
        ("main.go", Some(Language::Go)),
        ("A.java", Some(Language::Java)),
        ("a.c", Some(Language::C)),
        ("a.h", Some(Language::C)),
        ("a.cc", Some(Language::Cpp)),
        ("a.cpp", Some(Language::Cpp)),
        ("a.cxx", Some(Language::Cpp)),
        ("a.hpp", Some(Language::Cpp)),
        ("a.hh", Some(Language::Cpp)),
        ("a.hxx", Some(Language::Cpp)),
        ("README.md", None),
        ("Makefile", None),
        ("dir.rs/file", None),
    ];
    for (path, language) in cases {
        assert_eq!(Language::from_path(path), language, "{path}");
    }
}

#[test]
fn rust_items_impls_traits_and_modules() {
    check(
        Language::Rust,
        r#"//! Rate limiting.
use std::time::Instant;

pub const MAX_TOKENS: u32 = 100;

/// A bucket of tokens.
#[derive(Debug)]
pub struct TokenBucket<T> {
    tokens: u32,
    last: T,
}

pub enum Refill { Fixed, Burst(u32) }

pub trait Limiter {
    fn try_acquire(&mut self) -> bool;
    fn name(&self) -> &str { "limiter" }
}

impl<T> TokenBucket<T> {
    /// Adds the tokens earned since the last refill.
    #[inline]
    pub fn refill(&mut self) {
        const LOCAL: u32 = 1;
        self.tokens += LOCAL;
    }
}

impl<T> Limiter for TokenBucket<T> {
    fn try_acquire(&mut self) -> bool {
        true
    }
}

mod tests {
    fn refills() {}
}

macro_rules! bucket { () => {} }
type Shared = std::sync::Arc<TokenBucket<Instant>>;
"#,
        r#"
        4-4-4 constant MAX_TOKENS | const MAX_TOKENS | pub const MAX_TOKENS: u32 = 100;
        6-8-11 struct TokenBucket | struct TokenBucket | pub struct TokenBucket<T> {
        13-13-13 enum Refill | enum Refill | pub enum Refill { Fixed, Burst(u32) }
        15-15-18 trait Limiter | trait Limiter | pub trait Limiter {
          16-16-16 method Limiter::try_acquire | fn try_acquire | fn try_acquire(&mut self) -> bool;
          17-17-17 method Limiter::name | fn name | fn name(&self) -> &str { "limiter" }
        20-20-27 impl TokenBucket | impl TokenBucket | impl<T> TokenBucket<T> {
          21-23-26 method TokenBucket::refill | fn refill | pub fn refill(&mut self) {
        29-29-33 impl TokenBucket | impl Limiter for TokenBucket | impl<T> Limiter for TokenBucket<T> {
          30-30-32 method TokenBucket::try_acquire | fn try_acquire | fn try_acquire(&mut self) -> bool {
        35-35-37 module tests | mod tests | mod tests {
          36-36-36 function tests::refills | fn refills | fn refills() {}
        39-39-39 function bucket | macro_rules! bucket | macro_rules! bucket { () => {} }
        40-40-40 type Shared | type Shared | type Shared = std::sync::Arc<TokenBucket<Instant>>;
        "#,
    );
}

#[test]
fn python_classes_methods_decorators_and_constants() {
    check(
        Language::Python,
        r#"import time

DEFAULT_RATE = 10
lowercase = 1

# A bucket of tokens.
@dataclass
class TokenBucket:
    """Tokens refill over time."""

    rate: int = DEFAULT_RATE

    @property
    def tokens(self):
        return self._tokens

    def refill(self, now):
        def earned():
            return now - self.last
        self._tokens += earned()

    class Config:
        pass


async def acquire(bucket):
    return bucket.refill(time.time())
"#,
        r#"
        3-3-3 constant DEFAULT_RATE | constant DEFAULT_RATE | DEFAULT_RATE = 10
        6-8-23 class TokenBucket | class TokenBucket | class TokenBucket:
          13-14-15 method TokenBucket.tokens | def tokens | def tokens(self):
          17-17-20 method TokenBucket.refill | def refill | def refill(self, now):
            18-18-19 function TokenBucket.refill.earned | def earned | def earned():
          22-22-23 class TokenBucket.Config | class Config | class Config:
        26-26-27 function acquire | def acquire | async def acquire(bucket):
        "#,
    );
}

#[test]
fn javascript_classes_functions_and_bound_functions() {
    check(
        Language::JavaScript,
        r#"const MAX_RATE = 10;

/** A bucket of tokens. */
export class TokenBucket {
  constructor(rate) {
    this.rate = rate;
  }

  // Adds tokens.
  refill(now) {
    const helper = () => now;
    return helper();
  }

  onTick = () => this.refill(Date.now());
}

export function createBucket(rate) {
  return new TokenBucket(rate);
}

const acquire = async (bucket) => bucket.refill(0);
module.exports = { acquire };
"#,
        r#"
        1-1-1 constant MAX_RATE | const MAX_RATE | const MAX_RATE = 10;
        3-4-16 class TokenBucket | class TokenBucket | export class TokenBucket {
          5-5-7 method TokenBucket.constructor | method constructor | constructor(rate) {
          9-10-13 method TokenBucket.refill | method refill | refill(now) {
          15-15-15 method TokenBucket.onTick | method onTick | onTick = () => this.refill(Date.now());
        18-18-20 function createBucket | function createBucket | export function createBucket(rate) {
        22-22-22 function acquire | function acquire | const acquire = async (bucket) => bucket.refill(0);
        "#,
    );
}

#[test]
fn typescript_interfaces_aliases_enums_and_namespaces() {
    check(
        Language::TypeScript,
        r#"/** What a limiter can do. */
export interface Limiter {
  tryAcquire(): boolean;
}

export type Rate = { perSecond: number };

enum Mode { Fixed, Burst }

export namespace Limits {
  export const DEFAULT: Rate = { perSecond: 1 };
  export function clamp(rate: Rate): Rate {
    return rate;
  }
}

@Injectable()
export class TokenBucket implements Limiter {
  private tokens = 0;

  @Log()
  tryAcquire(): boolean {
    return this.tokens > 0;
  }
}

export abstract class Base {
  abstract refill(): void;
}

declare function external(x: number): void;
"#,
        r#"
        1-2-4 interface Limiter | interface Limiter | export interface Limiter {
          3-3-3 method Limiter.tryAcquire | method tryAcquire | tryAcquire(): boolean;
        6-6-6 type Rate | type Rate | export type Rate = { perSecond: number };
        8-8-8 enum Mode | enum Mode | enum Mode { Fixed, Burst }
        10-10-15 module Limits | namespace Limits | export namespace Limits {
          11-11-11 constant Limits.DEFAULT | const DEFAULT | export const DEFAULT: Rate = { perSecond: 1 };
          12-12-14 function Limits.clamp | function clamp | export function clamp(rate: Rate): Rate {
        17-18-25 class TokenBucket | class TokenBucket | export class TokenBucket implements Limiter {
          21-22-24 method TokenBucket.tryAcquire | method tryAcquire | tryAcquire(): boolean {
        27-27-29 class Base | abstract class Base | export abstract class Base {
          28-28-28 method Base.refill | method refill | abstract refill(): void;
        31-31-31 function external | function external | declare function external(x: number): void;
        "#,
    );
}

#[test]
fn tsx_components() {
    check(
        Language::Tsx,
        r#"import React from "react";

type Props = { label: string };

/** The button users press to refill. */
export const RefillButton = ({ label }: Props) => {
  const onClick = () => console.log(label);
  return <button onClick={onClick}>{label}</button>;
};

export default function App() {
  return <RefillButton label="go" />;
}
"#,
        r#"
        3-3-3 type Props | type Props | type Props = { label: string };
        5-6-9 function RefillButton | function RefillButton | export const RefillButton = ({ label }: Props) => {
        11-11-13 function App | function App | export default function App() {
        "#,
    );
}

#[test]
fn go_methods_with_receivers_types_and_constants() {
    check(
        Language::Go,
        r#"package ratelimit

const MaxTokens = 100

const (
	// Fixed refills at a steady rate.
	Fixed = iota
	Burst
)

// TokenBucket holds tokens.
type TokenBucket struct {
	tokens int
}

type Limiter interface {
	TryAcquire() bool
}

type Rate float64

// Refill adds tokens.
func (b *TokenBucket) Refill(now int64) {
	b.tokens++
}

func (b Bucket[T]) Peek() T { return b.v }

func New() *TokenBucket {
	return &TokenBucket{}
}
"#,
        r#"
        3-3-3 constant MaxTokens | const MaxTokens | const MaxTokens = 100
        6-7-7 constant Fixed | const Fixed | Fixed = iota
        8-8-8 constant Burst | const Burst | Burst
        11-12-14 struct TokenBucket | struct TokenBucket | type TokenBucket struct {
        16-16-18 interface Limiter | interface Limiter | type Limiter interface {
          17-17-17 method Limiter.TryAcquire | method TryAcquire | TryAcquire() bool
        20-20-20 type Rate | type Rate | type Rate float64
        22-23-25 method TokenBucket.Refill | func (TokenBucket) Refill | func (b *TokenBucket) Refill(now int64) {
        27-27-27 method Bucket.Peek | func (Bucket) Peek | func (b Bucket[T]) Peek() T { return b.v }
        29-29-31 function New | func New | func New() *TokenBucket {
        "#,
    );
}

#[test]
fn java_nested_classes_enums_interfaces_and_records() {
    check(
        Language::Java,
        r#"package org.example;

/** Limits requests. */
public class RateLimiter {
    public static final int MAX_TOKENS = 100;
    private int tokens;

    public RateLimiter(int tokens) {
        this.tokens = tokens;
    }

    /** Tries to take one token. */
    @Override
    public boolean tryAcquire() {
        return tokens-- > 0;
    }

    public static class Builder {
        public RateLimiter build() { return new RateLimiter(1); }
    }

    enum Mode { FIXED, BURST }

    interface Clock {
        long now();
    }
}

record Window(long start, long end) {}
"#,
        r#"
        3-4-27 class RateLimiter | class RateLimiter | public class RateLimiter {
          5-5-5 constant RateLimiter.MAX_TOKENS | constant MAX_TOKENS | public static final int MAX_TOKENS = 100;
          8-8-10 method RateLimiter.RateLimiter | constructor RateLimiter | public RateLimiter(int tokens) {
          12-14-16 method RateLimiter.tryAcquire | method tryAcquire | public boolean tryAcquire() {
          18-18-20 class RateLimiter.Builder | class Builder | public static class Builder {
            19-19-19 method RateLimiter.Builder.build | method build | public RateLimiter build() { return new RateLimiter(1); }
          22-22-22 enum RateLimiter.Mode | enum Mode | enum Mode { FIXED, BURST }
          24-24-26 interface RateLimiter.Clock | interface Clock | interface Clock {
            25-25-25 method RateLimiter.Clock.now | method now | long now();
        29-29-29 class Window | record Window | record Window(long start, long end) {}
        "#,
    );
}

#[test]
fn c_functions_structs_typedefs_and_macros() {
    check(
        Language::C,
        r#"#include <stdint.h>

#define MAX_TOKENS 100
#define CLAMP(x) ((x) > MAX_TOKENS ? MAX_TOKENS : (x))

/* A bucket of tokens. */
struct token_bucket {
    uint32_t tokens;
};

typedef struct token_bucket bucket_t;

enum mode { FIXED, BURST };

int bucket_try_acquire(struct token_bucket *b);

// Adds tokens.
void bucket_refill(struct token_bucket *b, uint64_t now)
{
    int helper(void);
    b->tokens += 1;
}

static char *bucket_name(void) { return "bucket"; }
"#,
        r#"
        3-3-3 constant MAX_TOKENS | #define MAX_TOKENS | #define MAX_TOKENS 100
        4-4-4 function CLAMP | #define CLAMP | #define CLAMP(x) ((x) > MAX_TOKENS ? MAX_TOKENS : (x))
        6-7-9 struct token_bucket | struct token_bucket | struct token_bucket {
        11-11-11 type bucket_t | typedef bucket_t | typedef struct token_bucket bucket_t;
        13-13-13 enum mode | enum mode | enum mode { FIXED, BURST };
        15-15-15 function bucket_try_acquire | function bucket_try_acquire | int bucket_try_acquire(struct token_bucket *b);
        17-18-22 function bucket_refill | function bucket_refill | void bucket_refill(struct token_bucket *b, uint64_t now)
        24-24-24 function bucket_name | function bucket_name | static char *bucket_name(void) { return "bucket"; }
        "#,
    );
}

#[test]
fn cpp_namespaces_classes_and_out_of_line_methods() {
    check(
        Language::Cpp,
        r#"#include <cstdint>

namespace net {
namespace limits {

/// A bucket of tokens.
class TokenBucket {
public:
    explicit TokenBucket(int rate);
    bool tryAcquire();
    int tokens() const { return tokens_; }
private:
    int tokens_;
};

template <typename T>
struct Window {
    T start;
};

using Clock = std::uint64_t;

}  // namespace limits

// Adds tokens.
void limits::TokenBucket::refill() {
    tokens_ += 1;
}

bool helper(int x) { return x > 0; }

}  // namespace net
"#,
        r#"
        3-3-32 module net | namespace net | namespace net {
          4-4-23 module net::limits | namespace limits | namespace limits {
            6-7-14 class net::limits::TokenBucket | class TokenBucket | class TokenBucket {
              9-9-9 method net::limits::TokenBucket::TokenBucket | method TokenBucket | explicit TokenBucket(int rate);
              10-10-10 method net::limits::TokenBucket::tryAcquire | method tryAcquire | bool tryAcquire();
              11-11-11 method net::limits::TokenBucket::tokens | method tokens | int tokens() const { return tokens_; }
            16-17-19 struct net::limits::Window | struct Window | struct Window {
            21-21-21 type net::limits::Clock | using Clock | using Clock = std::uint64_t;
          25-26-28 method net::limits::TokenBucket::refill | method limits::TokenBucket::refill | void limits::TokenBucket::refill() {
          30-30-30 function net::helper | function helper | bool helper(int x) { return x > 0; }
        "#,
    );
}

#[test]
fn broken_text_still_yields_what_parses() {
    let text = "fn good() {}\n\nfn broken( {\n\nstruct After {}\n";
    let names: Vec<String> = symbols(text, Language::Rust)
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert!(names.contains(&"good".to_string()), "{names:?}");
    let text = "class Ok:\n    def fine(self):\n        pass\n\ndef broken(:\n    pass\n";
    let names: Vec<String> = symbols(text, Language::Python)
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert!(names.contains(&"fine".to_string()), "{names:?}");
}

#[test]
fn hostile_texts_neither_hang_nor_panic() {
    // Deep nesting, unbalanced brackets, control characters, empty, every language.
    let deep = format!("fn f() {{ {} }}", "(".repeat(2_000));
    for language in Language::ALL {
        let _ = symbols(&deep, language);
        let _ = symbols("", language);
        let _ = symbols("\0\u{fffd}\u{1}{{{{}}}}]]]", language);
        let _ = symbols(&"{".repeat(2_000), language);
        let _ = symbols("é\u{301}€𝄞 fn ünï() {}\nclass 𝄞: pass\n", language);
    }
    let huge = " ".repeat(MAX_PARSE_BYTES + 1);
    assert_eq!(
        symbols(&huge, Language::C),
        Err(SyntaxError::TooLarge(MAX_PARSE_BYTES + 1))
    );
}

#[test]
fn a_pathological_parse_stops_at_its_budget() {
    // Unbalanced brackets make error recovery slow; the budget bounds each of the parse
    // and the query in this thread's CPU time, so that is what is measured: a loaded
    // machine may take longer on the wall clock to spend the same budget.
    let text = format!("int f() {{ {} }}", "(".repeat(200_000));
    // Where no CPU clock is known the budget counts wall time (`budget.rs`), and so does
    // this test.
    let (cpu, wall) = (cpu_ns(CpuClock::Thread), std::time::Instant::now());
    let _ = symbols(&text, Language::Cpp);
    let spent = match cpu {
        0 => wall.elapsed(),
        cpu => std::time::Duration::from_nanos(cpu_ns(CpuClock::Thread) - cpu),
    };
    assert!(
        spent < PARSE_BUDGET * 2 + std::time::Duration::from_secs(2),
        "{spent:?}"
    );
}

#[test]
fn declarators_sharing_a_declaration_are_siblings() {
    check(
        Language::JavaScript,
        "const a = () => 1, b = () => 2;\nconst ÄÖ = 'ü', MAX = 3;\n",
        r#"
        1-1-1 function a | function a | const a = () => 1, b = () => 2;
        1-1-1 function b | function b | const a = () => 1, b = () => 2;
        2-2-2 constant MAX | const MAX | const ÄÖ = 'ü', MAX = 3;
        "#,
    );
}

#[test]
fn kinds_parse_from_their_words() {
    for kind in SymbolKind::ALL {
        assert_eq!(SymbolKind::parse(kind.as_str()), Some(kind));
    }
    assert_eq!(SymbolKind::parse("Function"), Some(SymbolKind::Function));
    assert_eq!(SymbolKind::parse("widget"), None);
}

#[test]
fn a_header_in_cpp_is_parsed_as_cpp_and_a_c_header_as_c() {
    let cpp = "namespace spdlog {\ntemplate<typename T>\nclass circular_q\n{\n    size_t max_items_ = 0;\n\npublic:\n    explicit circular_q(size_t max_items)\n        : max_items_(max_items + 1)\n    {}\n\n    size_t size() const\n    {\n        return max_items_;\n    }\n};\n}\n";
    assert_eq!(Language::of_file("q.h", cpp), Some(Language::Cpp));
    let found = symbols_for_path("include/q.h", cpp).unwrap().unwrap();
    let names: Vec<&str> = found.iter().map(|s| s.qualified_name.as_str()).collect();
    assert!(names.contains(&"spdlog::circular_q"), "{names:?}");
    assert!(names.contains(&"spdlog::circular_q::size"), "{names:?}");
    let size = found.iter().find(|s| s.name == "size").unwrap();
    assert_eq!((size.line, size.end_line), (11, 14));

    let c = "/* a C header; see also foo::bar in the docs */\n#ifndef Q_H\n#define Q_H\nstruct q { int n; };\nint q_size(const struct q *q);\n#endif\n";
    assert_eq!(Language::of_file("q.h", c), Some(Language::C));
    assert_eq!(Language::of_file("Q.H", cpp), Some(Language::Cpp));
    assert_eq!(Language::of_file("q.c", cpp), Some(Language::C));
}
