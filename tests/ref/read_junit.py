#!/usr/bin/env python3
"""Read a JUnit XML file with two real JUnit readers, as CI systems would, and print what each
sees: Debian's python3-junitparser, and junit2html (PyPI; the model its HTML report is drawn
from, and that report).

Run: PYTHONPATH=target/readers/junit2html-<version> /usr/bin/python3 tests/ref/read_junit.py FILE
(scripts/setup.sh installs the one and unpacks the other there; tests/it/junit_readers.rs runs
this.)

Prints one JSON object: {"<reader>": [suite, ...], "junit2html_html": "<its report>"}, where
a suite is {"name", "tests", "failures", "skipped", "errors" (as the reader counts them), "cases":
[{"classname", "name", "outcome": "passed" | "failed" | "skipped" | "error", "message"}]}.
"""
import json
import sys

try:
    import junitparser
    from junit2htmlreport import parser as junit2html
except ImportError as e:
    print(f"{e.name} is missing: run scripts/setup.sh (python3-junitparser, junit2html)", file=sys.stderr)
    sys.exit(3)


def by_junitparser(path):
    xml = junitparser.JUnitXml.fromfile(path)
    suites = [xml] if isinstance(xml, junitparser.TestSuite) else list(xml)
    out = []
    for suite in suites:
        cases = []
        for case in suite:
            results = list(case.result)
            outcome, message = "passed", None
            if results:
                first = results[0]
                outcome = {
                    junitparser.Failure: "failed",
                    junitparser.Skipped: "skipped",
                    junitparser.Error: "error",
                }.get(type(first), type(first).__name__)
                message = first.message
            cases.append(
                {"classname": case.classname, "name": case.name, "outcome": outcome, "message": message}
            )
        out.append(
            {
                "name": suite.name,
                # The counts the suite declares, as junitparser reads them.
                "tests": suite.tests,
                "failures": suite.failures,
                "skipped": suite.skipped,
                "errors": suite.errors,
                "cases": cases,
            }
        )
    return out


def by_junit2html(path):
    report = junit2html.Junit(filename=path)
    out = []
    for suite in report:
        cases = []
        for case in suite.all():
            outcome = str(case.outcome())
            message = case.skipped_msg if case.skipped else case.failure_msg
            cases.append(
                {"classname": case.testclass.name, "name": case.name, "outcome": outcome, "message": message}
            )
        out.append(
            {
                "name": suite.name,
                # junit2html counts the cases it read.
                "tests": len(suite.all()),
                "failures": len(suite.failed()),
                "skipped": len(suite.skipped()),
                "errors": 0,
                "cases": cases,
            }
        )
    return out, report.html()


def main(path):
    cases, html = by_junit2html(path)
    print(json.dumps({"junitparser": by_junitparser(path), "junit2html": cases, "junit2html_html": html}))


if __name__ == "__main__":
    main(sys.argv[1])
