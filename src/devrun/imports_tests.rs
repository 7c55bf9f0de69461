use super::*;

/// The imports of `from` in a repository of `files` (path, text).
fn of(files: &[(&str, &str)], from: &str) -> BTreeSet<Import> {
    let texts: BTreeMap<String, String> = files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect();
    let names: BTreeSet<String> = texts.keys().cloned().collect();
    let read = |p: &str| texts.get(p).cloned();
    let repo = Repo::new(&names, &read);
    imports(&repo, from, &texts[from]).unwrap()
}

fn files(list: &BTreeSet<Import>) -> Vec<&str> {
    list.iter().map(Import::file).collect()
}

fn module(f: &str) -> Import {
    Import::Module(f.to_string())
}

fn through(file: &str, hub: &str, name: &str) -> Import {
    Import::Through { file: file.into(), hub: hub.into(), name: name.into() }
}

const SHOP: &[(&str, &str)] = &[
    (
        "shop/__init__.py",
        "\"\"\"The shop.\"\"\"\nfrom .pricing import *\nfrom .stock import in_stock, restock\nfrom .tax import rate as tax_rate\nfrom . import report\n\nVERSION = '1'\n",
    ),
    ("shop/pricing.py", "def total(prices):\n    return sum(prices)\n\n\nclass Cart:\n    pass\n"),
    ("shop/stock.py", "def in_stock(n):\n    return n > 0\n\n\ndef restock(n):\n    return n + 1\n"),
    ("shop/tax.py", "def rate():\n    return 0.2\n"),
    ("shop/report.py", "import json\nfrom .pricing import total\n"),
    ("shop/util/__init__.py", "from .fmt import money\n"),
    ("shop/util/fmt.py", "def money(x):\n    return f'{x:.2f}'\n"),
    ("json.txt", ""),
    ("helpers.py", "def helper():\n    pass\n"),
];

fn shop_with(test: &str) -> Vec<(&str, &str)> {
    let mut all = SHOP.to_vec();
    all.push(("tests/test_x.py", test));
    all
}

#[test]
fn python_imports_are_import_statements_resolved_to_files_never_words() {
    let cases: &[(&str, &[&str])] = &[
        ("import shop.pricing\n", &["shop/pricing.py"]),
        ("from shop.stock import in_stock\n", &["shop/stock.py"]),
        ("from shop import pricing, stock as s\n", &["shop/pricing.py", "shop/stock.py"]),
        // Standard library and third-party modules are not files here.
        ("import json, os.path\nimport pytest\nfrom collections import OrderedDict\n", &[]),
        // Words in docstrings, comments and strings are not imports.
        (
            "\"\"\"Tests; see shop.stock and `from shop.tax import rate`.\"\"\"\n# import shop.report\nx = 'import shop.tax'\ny = \"\"\"\nfrom shop.pricing import total\n\"\"\"\n",
            &[],
        ),
        // Over several lines, with a trailing comment, inside a function.
        (
            "def test():\n    from shop.stock import (  # the stock\n        in_stock,\n        restock,\n    )\n",
            &["shop/stock.py"],
        ),
        // A comment ends at its line: the import on the next line is read.
        ("import json  # not shop.report\nfrom shop.stock import in_stock\n", &["shop/stock.py"]),
        // A module beside the file, or at the top (pytest's rootdir on the path).
        ("from helpers import helper\n", &["helpers.py"]),
    ];
    for (test, want) in cases {
        let got = of(&shop_with(test), "tests/test_x.py");
        assert_eq!(files(&got), want.to_vec(), "{test}");
    }
    // Relative imports resolve from the file's package.
    assert_eq!(files(&of(SHOP, "shop/report.py")), ["shop/pricing.py"]);
}

#[test]
fn a_name_imported_from_a_hub_is_followed_to_the_module_that_defines_it() {
    let got = |test: &str| of(&shop_with(test), "tests/test_x.py");
    // `from .pricing import *` in the hub: the module that defines `total`, not every module.
    assert_eq!(
        got("from shop import total\n"),
        BTreeSet::from([through("shop/pricing.py", "shop/__init__.py", "total")])
    );
    assert_eq!(
        got("from shop import restock\n"),
        BTreeSet::from([through("shop/stock.py", "shop/__init__.py", "restock")])
    );
    // An alias in the hub.
    assert_eq!(
        got("from shop import tax_rate\n"),
        BTreeSet::from([through("shop/tax.py", "shop/__init__.py", "tax_rate")])
    );
    // `from . import report` in the hub, and a hub under a hub.
    assert_eq!(files(&got("from shop import report\n")), ["shop/report.py"]);
    assert_eq!(files(&got("from shop.util import money\n")), ["shop/util/fmt.py"]);
    // `import shop` then `shop.name`: the names it uses.
    assert_eq!(files(&got("import shop\n\nshop.in_stock(1)\nshop.Cart()\n")), ["shop/pricing.py", "shop/stock.py"]);
    assert_eq!(files(&got("import shop as s\n\ns.total([])\n")), ["shop/pricing.py"]);
    // A star import from the hub: the names the file uses.
    assert_eq!(files(&got("from shop import *\n\nassert in_stock(1)\n")), ["shop/stock.py"]);
    // A name the hub itself defines: the hub; a name nobody defines: nothing.
    assert_eq!(got("from shop import VERSION\n"), BTreeSet::from([module("shop/__init__.py")]));
    assert!(got("from shop import nothing_here\n").is_empty());
    // The hub as a seed: its own re-exports are not what it uses.
    assert!(of(SHOP, "shop/__init__.py").is_empty());
}

const CRATE: &[(&str, &str)] = &[
    ("Cargo.toml", "[package]\nname = \"shapes-kit\"\nversion = \"0.1.0\"\n\n[dependencies]\nserde = \"1\"\n"),
    (
        "src/lib.rs",
        "//! Shapes.\npub mod area;\npub mod perimeter;\nmod util;\npub use area::*;\npub use perimeter::{perimeter, Side as Edge};\n\npub const UNIT: f64 = 1.0;\n",
    ),
    (
        "src/area.rs",
        "use crate::util::half;\n\npub fn area(w: f64, h: f64) -> f64 {\n    w * h\n}\n\npub fn triangle(b: f64, h: f64) -> f64 {\n    half(b * h)\n}\n",
    ),
    (
        "src/perimeter.rs",
        "pub struct Side(pub f64);\n\npub fn perimeter(w: f64, h: f64) -> f64 {\n    2.0 * (w + h)\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn square() {\n        assert_eq!(perimeter(1.0, 1.0), 4.0);\n    }\n}\n",
    ),
    ("src/util.rs", "pub fn half(x: f64) -> f64 {\n    x / 2.0\n}\n"),
    ("src/geo/mod.rs", "pub mod point;\n"),
    ("src/geo/point.rs", "use super::super::util;\npub fn origin() -> f64 { util::half(0.0) }\n"),
];

fn crate_with(test: &str) -> Vec<(&str, &str)> {
    let mut all = CRATE.to_vec();
    all.push(("tests/shapes.rs", test));
    all
}

#[test]
fn rust_imports_are_use_mod_and_paths_in_code_resolved_to_files() {
    let cases: &[(&str, &[&str])] = &[
        ("use shapes_kit::area::area;\n", &["src/area.rs"]),
        ("#[test]\nfn t() { assert_eq!(shapes_kit::perimeter::perimeter(1.0, 1.0), 4.0); }\n", &["src/perimeter.rs"]),
        // Other crates and std are not files here; words in comments and strings are not paths.
        (
            "use std::collections::BTreeMap;\nuse serde::Serialize;\n// use shapes_kit::area;\nconst S: &str = \"shapes_kit::perimeter::perimeter\";\n/* shapes_kit::util */\n",
            &[],
        ),
        ("use shapes_kit::{area::triangle, perimeter};\n", &["src/area.rs", "src/perimeter.rs"]),
    ];
    for (test, want) in cases {
        let got = of(&crate_with(test), "tests/shapes.rs");
        assert_eq!(files(&got), want.to_vec(), "{test}");
    }
    assert_eq!(files(&of(CRATE, "src/area.rs")), ["src/util.rs"]);
    // `super::super::util` from a folder module; `use super::*` in an inline test module is not followed.
    assert_eq!(files(&of(CRATE, "src/geo/point.rs")), ["src/util.rs"]);
    assert!(of(CRATE, "src/perimeter.rs").is_empty());
    // A hub as a seed: its `mod` and `pub use` items are its structure.
    assert!(of(CRATE, "src/lib.rs").is_empty());
    // A folder module's `mod` items are its structure too.
    assert!(of(CRATE, "src/geo/mod.rs").is_empty());
}

#[test]
fn a_name_taken_from_a_rust_hub_is_followed_to_the_module_that_defines_it() {
    let got = |test: &str| of(&crate_with(test), "tests/shapes.rs");
    assert_eq!(got("use shapes_kit::triangle;\n"), BTreeSet::from([through("src/area.rs", "src/lib.rs", "triangle")]));
    assert_eq!(got("use shapes_kit::Edge;\n"), BTreeSet::from([through("src/perimeter.rs", "src/lib.rs", "Edge")]));
    // A glob import of the crate: the names the test uses, not every module.
    assert_eq!(
        files(&got("use shapes_kit::*;\n\n#[test]\nfn t() { assert_eq!(area(2.0, 3.0), 6.0); }\n")),
        ["src/area.rs"]
    );
    // The hub's own item: the hub.
    assert_eq!(files(&got("use shapes_kit::UNIT;\n")), ["src/lib.rs"]);
}

#[test]
fn a_file_in_a_language_without_an_import_reader_is_left_to_the_caller() {
    let texts: BTreeSet<String> = ["web/app.js".to_string()].into();
    let read = |_: &str| None;
    let repo = Repo::new(&texts, &read);
    assert_eq!(imports(&repo, "web/app.js", "require('./cart')"), None);
    assert_eq!(crate_name("[package]\nname = \"a-b\"\n[lib]\nname = \"ab_lib\"\n"), Some("ab_lib".into()));
    assert_eq!(crate_name("[package]\nname = \"a-b\"\n"), Some("a_b".into()));
}
