//! CPU time of this process from the kernel's own accounting (`/proc/self/stat`), so the
//! client's cost per transaction can be compared with another tool's.

/// User + system CPU seconds used so far by this process (all threads); None off Linux.
pub(crate) fn process_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/self/stat").ok()?;
    parse_stat(&text)
}

/// CPU seconds of this process's children that have exited and been waited for
/// (cutime + cstime): what a finished external tool such as sysbench used.
pub(crate) fn children_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/self/stat").ok()?;
    parse_fields(&text, 13, 14)
}

/// utime and stime (fields 14 and 15) in clock ticks; the kernel's USER_HZ is 100 on
/// every Linux architecture rmatrix runs on.
fn parse_stat(text: &str) -> Option<f64> {
    parse_fields(text, 11, 12)
}

/// Sum of two tick fields, counted from the state field after the command name.
fn parse_fields(text: &str, a: usize, b: usize) -> Option<f64> {
    // The command name may contain spaces: fields are counted after its closing paren.
    let rest = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let x: f64 = fields.get(a)?.parse().ok()?;
    let y: f64 = fields.get(b)?.parse().ok()?;
    Some((x + y) / 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_utime_and_stime() {
        let stat = "1234 (a b) S 1 1234 1234 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 1 0";
        assert_eq!(parse_stat(stat), Some(3.0));
        assert_eq!(parse_fields(stat, 13, 14), Some(0.0));
        assert!(children_seconds().is_some());
        assert!(process_seconds().is_some());
    }
}
