//! End-to-end: the no-model ranking through `copilot-ls ask --json` on a small shop
//! project: a traceback frame or a named symbol puts its file first and cites the
//! definition's own lines, and a bug report saying "my test fails" does not lift the
//! project's tests above its source (while a question about the tests does).

use std::path::Path;
use std::process::Command;

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
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

fn ask(workspace: &Path, question: &str) -> Value {
    let cache = tempfile::tempdir().unwrap();
    let output = Command::new(BIN)
        .args(["ask", "--json", "--workspace"])
        .arg(workspace)
        .arg(question)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("COPILOT_LS_PROVIDER", "none")
        .env("COPILOT_LS_CACHE_DIR", cache.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    serde_json::from_slice(&output.stdout).expect("one AskResult")
}

/// The distinct cited files, in order.
fn cited_paths(result: &Value) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    for citation in result["citations"].as_array().unwrap() {
        let path = citation["path"].as_str().unwrap().to_string();
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    paths
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
    let paths = cited_paths(&result);
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
    let paths = cited_paths(&ask(
        ws.path(),
        "Where are the tests for the cart total with a discount?",
    ));
    assert_eq!(paths[0], "tests/test_cart.py", "{paths:?}");
    // So does naming a test that exists.
    let paths = cited_paths(&ask(
        ws.path(),
        "test_cart_total_fails_without_items is flaky on CI",
    ));
    assert_eq!(paths[0], "tests/test_cart.py", "{paths:?}");
}
