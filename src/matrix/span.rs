//! Where each node of a YAML document sits, so that errors found after deserialising
//! (an unknown name in `exclude`, a missing field combination) still point at file:line:column.

use std::collections::HashMap;

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::Marker;

/// 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    pub line: usize,
    pub col: usize,
}

/// Positions by path: `servers.db.build`, `exclude[0].engine`, `concurrency[2]`.
/// A mapping key's own position is stored under `path#key`.
#[derive(Debug, Default)]
pub struct SpanIndex {
    map: HashMap<String, Pos>,
}

impl SpanIndex {
    pub fn build(text: &str) -> SpanIndex {
        let mut rec = Recorder::default();
        let mut parser = Parser::new_from_str(text);
        // Syntax errors are reported by serde_yaml with their own position; ignore here.
        let _ = parser.load(&mut rec, false);
        SpanIndex { map: rec.map }
    }

    /// The position of the value at `path`, else of its key, else of the nearest parent.
    pub fn find(&self, path: &str) -> Pos {
        let mut p = path.to_string();
        loop {
            if let Some(pos) = self
                .map
                .get(&p)
                .or_else(|| self.map.get(&format!("{p}#key")))
            {
                return *pos;
            }
            match p.rfind(['.', '[']) {
                Some(i) => p.truncate(i),
                None => return Pos { line: 1, col: 1 },
            }
        }
    }

    pub fn key(&self, path: &str) -> Pos {
        self.map
            .get(&format!("{path}#key"))
            .copied()
            .unwrap_or_else(|| self.find(path))
    }
}

enum Frame {
    Map { path: String, key: Option<String> },
    Seq { path: String, index: usize },
}

#[derive(Default)]
struct Recorder {
    stack: Vec<Frame>,
    map: HashMap<String, Pos>,
}

impl Recorder {
    /// The path of the node that starts now, advancing the parent's key/index state.
    /// Returns None when the node is a mapping key.
    fn next_path(&mut self, scalar: Option<&str>, pos: Pos) -> Option<String> {
        match self.stack.last_mut() {
            None => Some(String::new()),
            Some(Frame::Seq { path, index }) => {
                let p = format!("{path}[{index}]");
                *index += 1;
                Some(p)
            }
            Some(Frame::Map { path, key }) => match key.take() {
                Some(k) => Some(join(path, &k)),
                None => {
                    let k = scalar.unwrap_or("?").to_string();
                    self.map.insert(format!("{}#key", join(path, &k)), pos);
                    *key = Some(k);
                    None
                }
            },
        }
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

impl MarkedEventReceiver for Recorder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        let pos = Pos {
            line: mark.line(),
            col: mark.col() + 1,
        };
        match ev {
            Event::Scalar(value, ..) => {
                if let Some(p) = self.next_path(Some(&value), pos) {
                    self.map.insert(p, pos);
                }
            }
            Event::Alias(_) => {
                if let Some(p) = self.next_path(Some("*alias"), pos) {
                    self.map.insert(p, pos);
                }
            }
            Event::MappingStart(..) => {
                let p = self.next_path(None, pos).unwrap_or_default();
                self.map.insert(p.clone(), pos);
                self.stack.push(Frame::Map { path: p, key: None });
            }
            Event::SequenceStart(..) => {
                let p = self.next_path(None, pos).unwrap_or_default();
                self.map.insert(p.clone(), pos);
                self.stack.push(Frame::Seq { path: p, index: 0 });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                self.stack.pop();
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_values_keys_and_list_items() {
        let text = "servers:\n  db:\n    build: mariadb\nexclude:\n  - engine: MyISAM\n    workload: [a, b]\n";
        let idx = SpanIndex::build(text);
        assert_eq!(idx.find("servers.db.build"), Pos { line: 3, col: 12 });
        assert_eq!(idx.key("servers.db"), Pos { line: 2, col: 3 });
        assert_eq!(idx.find("exclude[0].engine"), Pos { line: 5, col: 13 });
        assert_eq!(idx.find("exclude[0].workload[1]"), Pos { line: 6, col: 19 });
        // Unknown paths fall back to the nearest parent.
        assert_eq!(idx.find("exclude[0].nothing").line, 5);
    }
}
