//! End-to-end: the no-model ranking through `copilot-ls ask --json` on a small shop
//! project: a traceback frame or a named symbol puts its file first and cites the
//! definition's own lines, and a bug report saying "my test fails" does not lift the
//! project's tests above its source (while a question about the tests does). On a small
//! HTTP client: a place is a definition or code, never a module docstring, an import
//! block or an `if TYPE_CHECKING:` guard, and the questions reach the definitions that
//! answer them. Among the first files, the one whose name the question spells goes
//! first.

use std::path::Path;

use copilot_ls_test_support::ask::{ask_without_model, cited_files};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_copilot-ls");

const PRICING: &str = "\
\"\"\"Prices and discounts.\"\"\"
from decimal import Decimal


def apply_discount(total, percent):
    \"\"\"Takes `percent` off `total`.\"\"\"
    if percent < 0:
        raise ValueError(\"negative discount\")
    return total - total * Decimal(percent) / 100


def round_price(value):
    return value.quantize(Decimal(\"0.01\"))
";

const CART: &str = "\
\"\"\"The shopping cart.\"\"\"
from .pricing import apply_discount


class Cart:
    \"\"\"Items a customer is about to buy.\"\"\"

    def __init__(self):
        self.items = []

    def add_item(self, name, price, quantity=1):
        \"\"\"Adds `quantity` of an item.\"\"\"
        self.items.append((name, price))

    def total(self, discount=0):
        subtotal = sum(price for _, price in self.items)
        return apply_discount(subtotal, discount)
";

const RECEIPT: &str = "\
\"\"\"Printing receipts.\"\"\"


def render_receipt(cart, out):
    for name, price in cart.items:
        out.write(f\"{name}: {price}\\n\")
    out.write(f\"total: {cart.total()}\\n\")
";

const TEST_CART: &str = "\
from shop.cart import Cart


def test_cart_total_with_discount():
    cart = Cart()
    cart.add_item(\"apple\", 10)
    assert cart.total(discount=10) == 9


def test_cart_total_fails_without_items():
    cart = Cart()
    assert cart.total() == 0


def test_receipt_total_after_discount():
    cart = Cart()
    cart.add_item(\"pear\", 20, quantity=2)
    assert cart.total(discount=50) == 20
";

const INVENTORY: &str = "\
package com.shop;

import java.util.HashMap;
import java.util.Map;

/** Stock levels. */
public class Inventory {
    private final Map<String, Integer> stock = new HashMap<>();

    /** Takes items out of stock for an order. */
    public void reserve(String sku, int count) {
        int left = stock.get(sku) - count;
        stock.put(sku, left);
    }
}
";

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut files: Vec<(String, String)> = vec![
        ("src/shop/pricing.py".into(), PRICING.into()),
        ("src/shop/cart.py".into(), CART.into()),
        ("src/shop/receipt.py".into(), RECEIPT.into()),
        ("src/shop/__init__.py".into(), String::new()),
        ("tests/test_cart.py".into(), TEST_CART.into()),
        (
            "src/main/java/com/shop/Inventory.java".into(),
            INVENTORY.into(),
        ),
        (
            "docs/guide.md".into(),
            "# Guide\n\nAdd items to the cart; the total applies the discount.\n".into(),
        ),
    ];
    // Unrelated modules give the words realistic rarities.
    for i in 0..20 {
        files.push((
            format!("src/shop/util{i}.py"),
            format!("def helper_{i}(value):\n    \"\"\"Formats a value.\"\"\"\n    return str(value) + \"{i}\"\n"),
        ));
    }
    write_files(dir.path(), files);
    dir
}

/// Twenty unrelated modules in `dir`, which give the words realistic rarities.
fn fillers(dir: &str) -> Vec<(String, String)> {
    (0..20)
        .map(|i| {
            (
                format!("{dir}/util{i}.py"),
                format!("def helper_{i}(value):\n    return str(value) + \"{i}\"\n"),
            )
        })
        .collect()
}

fn write_files(root: &Path, files: Vec<(String, String)>) {
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

fn ask(workspace: &Path, question: &str) -> Value {
    ask_without_model(Path::new(BIN), workspace, question, &[])
}

#[test]
fn a_traceback_frame_ranks_its_file_first_and_cites_the_function() {
    let ws = workspace();
    let report = "\
Cart total is wrong with a discount

When I check out with a discount the total comes out wrong and sometimes it crashes:

```
Traceback (most recent call last):
  File \"/home/me/app/checkout.py\", line 30, in checkout
    print(cart.total(discount=d))
  File \"/usr/lib/python3.12/site-packages/shop/pricing.py\", line 8, in apply_discount
    raise ValueError(\"negative discount\")
ValueError: negative discount
```

I expected the cart to ignore a discount it cannot apply.
";
    let result = ask(ws.path(), report);
    let first = &result["citations"][0];
    assert_eq!(first["path"], "src/shop/pricing.py", "{result:#}");
    // `def apply_discount` is line 5, its body ends on line 9.
    assert_eq!(
        (first["line"].as_u64(), first["endLine"].as_u64()),
        (Some(5), Some(9)),
        "{result:#}"
    );
    let answer = result["answer"].as_str().unwrap();
    assert!(
        answer.contains("```py\ndef apply_discount(total, percent):"),
        "{answer}"
    );
}

#[test]
fn a_named_symbol_ranks_its_file_first_and_cites_its_definition() {
    let ws = workspace();
    let result = ask(
        ws.path(),
        "`Cart.add_item` ignores the quantity: adding three pears adds one, so the total is too low",
    );
    let first = &result["citations"][0];
    assert_eq!(first["path"], "src/shop/cart.py", "{result:#}");
    // `def add_item` on line 11; the method ends on line 13.
    assert_eq!(
        (first["line"].as_u64(), first["endLine"].as_u64()),
        (Some(11), Some(13)),
        "{result:#}"
    );
}

#[test]
fn a_java_stack_frame_ranks_its_file_first() {
    let ws = workspace();
    let result = ask(
        ws.path(),
        "NPE when ordering an unknown product\n\nException in thread \"main\" java.lang.NullPointerException\n\tat com.shop.Inventory.reserve(Inventory.java:12)\n\tat com.shop.Orders.place(Orders.java:40)\n",
    );
    let first = &result["citations"][0];
    assert_eq!(
        first["path"], "src/main/java/com/shop/Inventory.java",
        "{result:#}"
    );
    assert_eq!(
        first["line"], 11,
        "`public void reserve` is line 11: {result:#}"
    );
}

#[test]
fn my_test_fails_does_not_surface_the_projects_tests() {
    let ws = workspace();
    let report = "\
My test fails: cart total with discount

My test fails since the last release. In my test I add an item to the cart and check \
the cart total with a discount of 10, and the total is not what the test expects. The \
test passed before. Is the discount applied to the cart total twice?
";
    let result = ask(ws.path(), report);
    let paths = cited_files(&result);
    // The user's test is not ours: the project's tests (demoted, as for any question
    // not about them) come after every source place, never ahead of a source file. The workspace
    // has few places matching at all, so they may still fill the list's end.
    let first_test = paths.iter().position(|p| p.starts_with("tests/"));
    let last_source = paths.iter().rposition(|p| p.starts_with("src/"));
    assert!(last_source.is_some(), "{paths:?}");
    assert!(
        first_test.is_none_or(|t| t > last_source.unwrap()),
        "a test ranks above a source file: {paths:?}"
    );
    assert_eq!(paths[0], "src/shop/cart.py", "{paths:?}");
    // A question about the tests still finds them.
    let paths = cited_files(&ask(
        ws.path(),
        "Where are the tests for the cart total with a discount?",
    ));
    assert_eq!(paths[0], "tests/test_cart.py", "{paths:?}");
    // So does naming a test that exists.
    let paths = cited_files(&ask(
        ws.path(),
        "test_cart_total_fails_without_items is flaky on CI",
    ));
    assert_eq!(paths[0], "tests/test_cart.py", "{paths:?}");
}

// ---- A place is a definition or code, never a docstring, imports or a guard alone ----

/// A small HTTP client shaped like `requests`: modules that open with a docstring, a
/// block of imports and an `if TYPE_CHECKING:` guard, in the words of the questions
/// (redirects, retries, limits), beside the definitions that answer them.
const HTTPKIT: &[(&str, &str)] = &[
    (
        "httpkit/sessions.py",
        r#""""
httpkit.sessions
~~~~~~~~~~~~~~~~

This module provides a Session object to manage and persist settings across
requests: cookies, auth, proxies. The session follows redirects, up to a limit,
and retries failed connections through its adapters.
"""
import os
import sys
import time
from collections import OrderedDict
from datetime import timedelta
from typing import TYPE_CHECKING

from .adapters import HTTPAdapter
from .exceptions import InvalidSchema, TooManyRedirects
from .models import DEFAULT_REDIRECT_LIMIT, PreparedRequest, Request

if TYPE_CHECKING:
    from .models import Response


def merge_setting(request_setting, session_setting):
    """Merges a request's setting over the session's."""
    if session_setting is None:
        return request_setting
    if request_setting is None:
        return session_setting
    merged = OrderedDict(session_setting)
    merged.update(request_setting)
    return merged


class SessionRedirectMixin:
    def get_redirect_target(self, resp):
        """The URL a response redirects to, or None."""
        if resp.is_redirect:
            return resp.headers["location"]
        return None

    def resolve_redirects(self, resp, req, stream=False, timeout=None):
        """Follows the redirects of a response, yielding each response."""
        hist = []
        url = self.get_redirect_target(resp)
        while url:
            prepared = req.copy()
            hist.append(resp)
            resp.history = hist[1:]
            if len(resp.history) >= self.max_redirects:
                raise TooManyRedirects(
                    f"Exceeded {self.max_redirects} redirects.", response=resp
                )
            resp.close()
            prepared.url = url
            resp = self.send(prepared, stream=stream, timeout=timeout, allow_redirects=False)
            yield resp
            url = self.get_redirect_target(resp)


class Session(SessionRedirectMixin):
    """A session: cookie persistence, connection pooling and configuration."""

    def __init__(self):
        self.headers = {}
        self.auth = None
        self.proxies = {}
        self.verify = True
        self.max_redirects = DEFAULT_REDIRECT_LIMIT
        self.adapters = OrderedDict()
        self.mount("https://", HTTPAdapter())
        self.mount("http://", HTTPAdapter())

    def mount(self, prefix, adapter):
        self.adapters[prefix] = adapter
"#,
    ),
    (
        "httpkit/adapters.py",
        r#""""
httpkit.adapters
~~~~~~~~~~~~~~~~

This module contains the transport adapters that httpkit uses to define and
maintain connections. How often a failed connection is retried is set here.
"""
import os.path
import socket
import typing

from .exceptions import ConnectionError, ConnectTimeout, RetryError
from .structures import CaseInsensitiveDict
from .utils import get_auth_from_url, select_proxy

if typing.TYPE_CHECKING:
    from .models import PreparedRequest

DEFAULT_POOLBLOCK = False
DEFAULT_POOLSIZE = 10
DEFAULT_RETRIES = 0
DEFAULT_POOL_TIMEOUT = None


class Retry:
    """How many times, and after which errors, a connection is tried again."""

    def __init__(self, total, read=True):
        self.total = total
        self.read = read

    @classmethod
    def from_int(cls, retries):
        return cls(retries)


class HTTPAdapter:
    """The built-in HTTP adapter: a connection pool per host."""

    def __init__(self, pool_connections=DEFAULT_POOLSIZE, max_retries=DEFAULT_RETRIES):
        if max_retries == DEFAULT_RETRIES:
            self.max_retries = Retry(0, read=False)
        else:
            self.max_retries = Retry.from_int(max_retries)
        self.pool_connections = pool_connections

    def send(self, request, stream=False, timeout=None):
        conn = self.get_connection(request.url)
        return conn.urlopen(request, retries=self.max_retries, timeout=timeout)
"#,
    ),
    (
        "httpkit/models.py",
        r#""""
httpkit.models
~~~~~~~~~~~~~~

The primary objects: requests, prepared requests and responses, and the
default limit of redirects a session follows.
"""
import datetime
import encodings.idna

from .structures import CaseInsensitiveDict

#: The most redirects a session follows by default.
DEFAULT_REDIRECT_LIMIT = 30
REDIRECT_STATI = (301, 302, 303, 307, 308)


class Response:
    """A server's response to a request."""

    def __init__(self):
        self.status_code = None
        self.headers = CaseInsensitiveDict()
        self.history = []

    @property
    def is_redirect(self):
        return "location" in self.headers and self.status_code in REDIRECT_STATI
"#,
    ),
    (
        "httpkit/exceptions.py",
        r#""""
httpkit.exceptions
~~~~~~~~~~~~~~~~~~

The exceptions httpkit raises.
"""


class HTTPError(IOError):
    """An HTTP error occurred."""


class TooManyRedirects(HTTPError):
    """Too many redirects."""


class RetryError(HTTPError):
    """Custom retries logic failed."""


class ConnectionError(HTTPError):
    """A connection error occurred."""
"#,
    ),
    (
        "httpkit/__init__.py",
        r#"""httpkit: HTTP for humans, smaller."""
from .sessions import Session
"#,
    ),
];

fn httpkit() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in HTTPKIT {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// Each citation as `path:line`, with the text of its line.
fn places(ws: &Path, result: &Value) -> Vec<(String, String)> {
    result["citations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let path = c["path"].as_str().unwrap();
            let line = c["line"].as_u64().unwrap() as usize;
            let text = std::fs::read_to_string(ws.join(path)).unwrap();
            let shown = text.lines().nth(line - 1).unwrap_or("").to_string();
            let shown = if in_module_docstring(&text, line) {
                format!("(docstring) {shown}")
            } else {
                shown.trim().to_string()
            };
            (format!("{path}:{line}"), shown)
        })
        .collect()
}

/// Whether 1-based `line` lies in the docstring the module opens with.
fn in_module_docstring(text: &str, line: usize) -> bool {
    let lines: Vec<&str> = text.lines().collect();
    if !lines.first().is_some_and(|l| l.starts_with("\"\"\"")) {
        return false;
    }
    let single = lines[0].len() > 3 && lines[0].trim_end().ends_with("\"\"\"");
    let last = if single {
        0
    } else {
        (1..lines.len())
            .find(|&i| lines[i].contains("\"\"\""))
            .unwrap_or(0)
    };
    line <= last + 1
}

/// What no place may be: a line of the module docstring, an import, a `TYPE_CHECKING`
/// guard, a blank line.
fn not_code(line: &str) -> bool {
    line.is_empty()
        || line.starts_with("(docstring)")
        || line.starts_with("import ")
        || line.starts_with("from ")
        || line.contains("TYPE_CHECKING")
}

#[test]
fn places_are_definitions_or_code_never_a_docstring_an_import_or_a_guard() {
    let ws = httpkit();
    for question in [
        "How are redirects limited?",
        "where is the retry count configured",
    ] {
        let result = ask(ws.path(), question);
        let found = places(ws.path(), &result);
        assert!(!found.is_empty(), "{question}: {result:#}");
        for (place, line) in &found {
            assert!(
                !not_code(line),
                "{question}: {place} is `{line}`: {found:#?}"
            );
        }
    }
}

#[test]
fn how_are_redirects_limited_reaches_the_check_of_the_limit() {
    let ws = httpkit();
    let result = ask(ws.path(), "How are redirects limited?");
    let found = places(ws.path(), &result);
    // `resolve_redirects` raises TooManyRedirects once the history reaches the limit.
    assert!(
        found
            .iter()
            .any(|(_, line)| line.starts_with("def resolve_redirects(")),
        "{found:#?}"
    );
}

#[test]
fn where_is_the_retry_count_configured_reaches_the_module_constant() {
    let ws = httpkit();
    let result = ask(ws.path(), "where is the retry count configured");
    let found = places(ws.path(), &result);
    assert!(
        found
            .iter()
            .any(|(place, line)| place == "httpkit/adapters.py:21" && line == "DEFAULT_RETRIES = 0"),
        "{found:#?}"
    );
}

#[test]
fn among_the_first_files_the_one_the_question_names_goes_first() {
    let ws = tempfile::tempdir().unwrap();
    let mut files: Vec<(String, String)> = vec![
        (
            "src/books/jobs.py".into(),
            "def run_nightly(ledger):\n    for entry in ledger.entries:\n        ledger.duplicate(entry)\n".into(),
        ),
        (
            "src/books/postings.py".into(),
            "def add(ledger, entry):\n    \"\"\"Books one entry in the ledger; the nightly run may book it twice.\"\"\"\n    ledger.entries.append(entry)\n".into(),
        ),
    ];
    files.extend(fillers("src/books"));
    write_files(ws.path(), files);
    // The nightly job matches these words more than the postings module does, and the
    // question names the postings module by its name.
    let result = ask(
        ws.path(),
        "postings: ledger entries are duplicated by the nightly run",
    );
    let cited = cited_files(&result);
    assert_eq!(
        cited[..2],
        ["src/books/postings.py", "src/books/jobs.py"],
        "{cited:?}"
    );
}

#[test]
fn a_pasted_message_ranks_the_code_that_prints_it_first() {
    let ws = tempfile::tempdir().unwrap();
    let mut files: Vec<(String, String)> = vec![
        (
            "src/tally/cli.py".into(),
            "\
\"\"\"The command line: export results as a markdown table or as csv.\"\"\"
import argparse

from .export import export_table


def main(argv=None):
    parser = argparse.ArgumentParser(prog=\"tally\")
    parser.add_argument(\"--markdown\", help=\"export the results as a markdown table\")
    parser.add_argument(\"--csv\", help=\"export the results as csv\")
    args = parser.parse_args(argv)
    results = load_results()
    if args.markdown:
        export_table(results, args.markdown, kind=\"markdown\")
    if args.csv:
        export_table(results, args.csv, kind=\"csv\")


def load_results():
    \"\"\"Reads the results the export command writes out as a table.\"\"\"
    return []
"
            .into(),
        ),
        (
            "src/tally/rows.py".into(),
            "\
def keep(rows, predicate):
    kept = [row for row in rows if predicate(row)]
    if not kept:
        raise ValueError(\"no rows left after filtering, nothing to write\")
    return kept
"
            .into(),
        ),
    ];
    files.extend(fillers("src/tally"));
    write_files(ws.path(), files);
    // The command line shares the report's words; the message is printed by `rows.py`.
    let report = "\
Export of results as a markdown table fails

Running the export command with `--markdown out.md` on my results prints:

```
ValueError: No rows left after filtering, nothing to write
```

The markdown table export worked for these results last week, and csv export still does.";
    let cited = cited_files(&ask(ws.path(), report));
    assert_eq!(
        cited.first().map(String::as_str),
        Some("src/tally/rows.py"),
        "{cited:?}"
    );
}

#[test]
fn a_module_named_like_a_changelog_is_ranked_as_source() {
    let ws = tempfile::tempdir().unwrap();
    let mut files: Vec<(String, String)> = vec![
        (
            "src/site/history.py".into(),
            "\
def history_entries(page):
    \"\"\"The log entries of a page's history, newest first, for the history screen.\"\"\"
    entries = [entry for entry in page.log if entry.page == page]
    return sorted(entries, key=lambda entry: entry.timestamp, reverse=True)
"
            .into(),
        ),
        (
            "src/site/screens.py".into(),
            "\
def render_screen(page, entries):
    \"\"\"Draws a page's screen with the entries given, in their order.\"\"\"
    return [str(entry) for entry in entries]
"
            .into(),
        ),
    ];
    files.extend(fillers("src/site"));
    write_files(ws.path(), files);
    // `history.py` is the code of a page's history, not a changelog (`HISTORY.rst`). The
    // question does not say "history", which would ask for a changelog and lift one.
    let cited = cited_files(&ask(
        ws.path(),
        "where are a page's log entries sorted, newest first?",
    ));
    assert_eq!(
        cited.first().map(String::as_str),
        Some("src/site/history.py"),
        "{cited:?}"
    );
}

/// A middleware module as web frameworks write them: a block of message constants named
/// with the question's nouns above the class whose method does what it asks.
const MIDDLEWARE: &str = r#""""Cross-site request forgery protection."""

REASON_BAD_ORIGIN = "Origin checking failed - %s does not match any trusted origins."
REASON_NO_REFERER = "Referer checking failed - no Referer."
REASON_NO_CSRF_COOKIE = "CSRF cookie not set."
REASON_CSRF_TOKEN_MISSING = "CSRF token missing."
REASON_CSRF_TOKEN_INCORRECT = "CSRF token incorrect."
CSRF_TOKEN_LENGTH = 64


class RejectRequest(Exception):
    def __init__(self, reason):
        self.reason = reason


class CsrfViewMiddleware:
    def _get_secret(self, request):
        return request.COOKIES.get("csrftoken")

    def _check_token(self, request):
        csrf_secret = self._get_secret(request)
        if csrf_secret is None:
            raise RejectRequest(REASON_NO_CSRF_COOKIE)
        request_csrf_token = request.POST.get("csrfmiddlewaretoken", "")
        if not request_csrf_token:
            raise RejectRequest(REASON_CSRF_TOKEN_MISSING)
        if request_csrf_token != csrf_secret:
            raise RejectRequest(REASON_CSRF_TOKEN_INCORRECT)

    def process_view(self, request, callback):
        try:
            self._check_token(request)
        except RejectRequest as exc:
            return exc.reason
        return None
"#;

#[test]
fn where_is_the_token_checked_reaches_the_method_that_checks_it_not_the_constants() {
    let ws = tempfile::tempdir().unwrap();
    let mut files = fillers("web");
    files.push(("web/csrf.py".into(), MIDDLEWARE.into()));
    files.push((
        "web/views.py".into(),
        "def csrf_failure(request, reason=\"\"):\n    return {\"reason\": reason}\n".into(),
    ));
    write_files(ws.path(), files);
    let result = ask(ws.path(), "where is the CSRF token checked");
    let found = places(ws.path(), &result);
    // The question's verb ("checked") and noun name the method; the constants hold
    // only its nouns (and a message with them).
    assert_eq!(
        found.first().map(|(_, line)| line.as_str()),
        Some("def _check_token(self, request):"),
        "{found:#?}"
    );
}
