//! A matrix file as untrusted input: whatever the bytes, parsing, validation, expansion and
//! rendering (the plan and the Markdown summary of made-up results) never panic or hang,
//! and no control character from the input reaches the rendered text.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use rmatrix::matrix::load_str;
use rmatrix::report::markdown;
use rmatrix::results::ResultRow;

/// Rendering is per cell; beyond this many cells only parsing and expansion are exercised.
const MAX_RENDERED_CELLS: usize = 300;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(loaded) = load_str(text, Path::new("fuzz.yaml")) else {
        return;
    };
    let plan_text = rmatrix::commands::plan_text_assumed(&loaded);
    assert_no_control(&plan_text, "plan");

    let plan = rmatrix::matrix::plan::expand(&loaded.matrix, &[]);
    if plan.cell_count() > MAX_RENDERED_CELLS {
        return;
    }
    let mut rows = Vec::new();
    for (i, cell) in plan.cells().enumerate() {
        for iteration in 1..=2 {
            let mut r = ResultRow::for_cell(cell, "slap", iteration);
            r.status = rmatrix::model::Status::Ok;
            r.queries = Some(1000);
            r.seconds = Some(1.0 + (i as f64 + iteration as f64) / 7.0);
            r.qps = r.seconds.map(|s| 1000.0 / s);
            rows.push(r);
        }
        // A failed iteration whose error text a hostile server chose.
        rows.push(ResultRow::for_cell(cell, "slap", 3).failed(text.get(..80).unwrap_or(text)));
    }
    let ctx = markdown::context(
        &loaded.matrix,
        &rows,
        &markdown::RunFacts::default(),
        &Default::default(),
    );
    let md =
        markdown::render(markdown::DEFAULT_TEMPLATE, &ctx).expect("the default template renders");
    assert_no_control(&md, "summary.md");
});

fn assert_no_control(text: &str, what: &str) {
    if let Some(c) = text.chars().find(|c| c.is_control() && *c != '\n') {
        panic!("{what} carries the control character {c:?}");
    }
}
