//! Where each node of a YAML document sits, so that errors found after deserialising
//! (an unknown name in `exclude`, a missing field combination) still point at file:line:column.

use std::collections::HashMap;

use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle, StrInput, StructureStyle};

/// The most aliases and merge keys a scalar's lookup goes through.
const MAX_HOPS: usize = 64;

/// 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Pos {
    pub(crate) line: usize,
    pub(crate) col: usize,
}

/// Positions by path: `servers.db.build`, `exclude[0].engine`, `concurrency[2]`.
/// A mapping key's own position is stored under `path#key`.
///
/// Built from the same parser's events as the deserialiser reads (granit-parser), so both
/// agree on every position. A merged key (`<<: *base`) has no place of its own in the text:
/// it resolves to the mapping that merges it. An alias's scalars are looked up through it
/// when asked for, never copied: a billion laughs costs the index what its text holds.
#[derive(Debug, Default)]
pub(crate) struct SpanIndex {
    map: HashMap<String, Pos>,
    /// Every node and key in document order: (start, path, "a list"/"a mapping" or None).
    order: Vec<(Pos, String, Option<&'static str>)>,
    /// Each scalar value by path, as written (so that a number can be told from a quoted
    /// string that serde read as one).
    scalars: HashMap<String, Written>,
    /// The anchored node's path of each alias, by the alias's path.
    aliases: HashMap<String, String>,
    /// The anchored mappings each mapping merges (`<<: *base`, `<<: [*a, *b]`), in order:
    /// its own keys win over theirs, and an earlier one's over a later one's.
    merges: HashMap<String, Vec<String>>,
    /// The first syntax error, where it is and what the parser says, with the flow
    /// collections still open there (innermost last).
    pub(crate) syntax: Option<Syntax>,
}

/// A scalar value as the text has it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Written {
    /// Plain (not quoted, not a block scalar).
    pub(crate) plain: bool,
    pub(crate) text: String,
}

/// A YAML syntax error found while indexing.
#[derive(Debug, Clone)]
pub(crate) struct Syntax {
    pub(crate) pos: Pos,
    pub(crate) message: String,
    /// `[` or `{` still open at the error, with where each opened (innermost last).
    pub(crate) open: Vec<(char, Pos)>,
}

impl SpanIndex {
    /// Index `text`; a syntax error stops the index where it is (the deserialiser reports it).
    pub(crate) fn build(text: &str) -> SpanIndex {
        let mut parser = parser(text);
        let mut rec = Recorder::default();
        let mut depth = 0usize;
        let mut syntax = None;
        while let Some(next) = parser.next_event() {
            let (ev, span) = match next {
                Ok(e) => e,
                Err(e) => {
                    let m = e.marker();
                    syntax = Some(Syntax {
                        pos: Pos {
                            line: m.line(),
                            col: m.col() + 1,
                        },
                        message: e.info(),
                        open: rec.open_flows(),
                    });
                    break;
                }
            };
            let pos = Pos {
                line: span.start.line(),
                col: span.start.col() + 1,
            };
            match ev {
                Event::MappingStart(..) | Event::SequenceStart(..) => depth += 1,
                Event::MappingEnd | Event::SequenceEnd => depth = depth.saturating_sub(1),
                _ => {}
            }
            if depth > super::yaml::MAX_DEPTH || rec.order.len() > super::yaml::MAX_NODES {
                break;
            }
            rec.on_event(ev, pos);
        }
        SpanIndex {
            map: rec.map,
            order: rec.order,
            scalars: rec.scalars,
            aliases: rec.aliases,
            merges: rec.merges,
            syntax,
        }
    }

    /// The position of the value at `path`, else of its key, else of the nearest parent.
    pub(crate) fn find(&self, path: &str) -> Pos {
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

    /// The scalar value at `path` as written, where the text has one there (through an
    /// alias or a merge key, the anchored scalar).
    pub(crate) fn scalar(&self, path: &str) -> Option<&Written> {
        self.resolve(path, 0)
    }

    /// The scalar at `path`, through the deepest alias or merge key on its way. Each step
    /// leads to an earlier anchor, so there are few; the bound only guards the recursion.
    fn resolve(&self, path: &str, hops: usize) -> Option<&Written> {
        if let Some(w) = self.scalars.get(path) {
            return Some(w);
        }
        if hops > MAX_HOPS {
            return None;
        }
        // Where each node on the way ends, deepest first.
        let mut cuts: Vec<usize> = path.match_indices(['.', '[']).map(|(i, _)| i).collect();
        cuts.push(path.len());
        for &cut in cuts.iter().rev() {
            let (head, rest) = path.split_at(cut);
            if let Some(anchor) = self.aliases.get(head) {
                return self.resolve(&format!("{anchor}{rest}"), hops + 1);
            }
            let Some(anchors) = self.merges.get(head) else {
                continue;
            };
            let inside = match head.is_empty() {
                true => rest,
                false => rest.strip_prefix('.')?,
            };
            let key = inside.split(['.', '[']).next().unwrap_or_default();
            if self.map.contains_key(&format!("{}#key", join(head, key))) {
                // The mapping's own key, which no merge replaces.
                return None;
            }
            return anchors
                .iter()
                .find_map(|a| self.resolve(&join(a, inside), hops + 1));
        }
        None
    }

    pub(crate) fn key(&self, path: &str) -> Pos {
        self.map
            .get(&format!("{path}#key"))
            .copied()
            .unwrap_or_else(|| self.find(path))
    }

    /// True when the text holds no node at all (empty, or only comments).
    pub(crate) fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The path of the innermost node or key that starts at or before `pos` (`""` for the
    /// document itself): what an error at `pos` is about.
    pub(crate) fn path_at(&self, pos: Pos) -> String {
        let i = self.order.partition_point(|(p, _, _)| *p <= pos);
        match i {
            0 => String::new(),
            i => self.order[i - 1].1.clone(),
        }
    }

    /// "a list" or "a mapping" when one starts exactly at `pos`.
    pub(crate) fn container_kind_at(&self, pos: Pos) -> Option<&'static str> {
        self.order
            .iter()
            .find(|(p, _, kind)| *p == pos && kind.is_some())
            .and_then(|(_, _, kind)| *kind)
    }

    /// Like `path_at`, but a list or mapping starting exactly at `pos` wins over the first key
    /// inside it (a block mapping and its first key start at the same place).
    pub(crate) fn container_at(&self, pos: Pos) -> String {
        self.order
            .iter()
            .find(|(p, _, kind)| *p == pos && kind.is_some())
            .map(|(_, path, _)| path.clone())
            .unwrap_or_else(|| self.path_at(pos))
    }
}

/// The events of `text` as the deserialiser reads them, with its limits: what the index and
/// the parameters' substitution (`input::params`) walk.
pub(crate) fn parser(text: &str) -> Parser<'_, StrInput<'_>> {
    let options = super::yaml::options().budget.unwrap_or_default();
    Parser::new_from_str_with_options(text, parser_options(&options))
}

fn parser_options(b: &serde_saphyr::Budget) -> serde_saphyr::granit_parser::Options {
    let mut o = serde_saphyr::granit_parser::Options::default();
    o.flow_nesting_limit = b.flow_nesting_limit;
    o
}

enum Frame {
    Map {
        path: String,
        key: Option<String>,
        flow: Option<Pos>,
    },
    Seq {
        path: String,
        index: usize,
        flow: Option<Pos>,
    },
}

#[derive(Default)]
struct Recorder {
    stack: Vec<Frame>,
    map: HashMap<String, Pos>,
    order: Vec<(Pos, String, Option<&'static str>)>,
    scalars: HashMap<String, Written>,
    aliases: HashMap<String, String>,
    merges: HashMap<String, Vec<String>>,
    /// The path of each anchored node, by anchor id.
    anchors: HashMap<usize, String>,
}

impl Recorder {
    /// The path of the node that starts now, advancing the parent's key/index state.
    /// Returns None when the node is a mapping key.
    fn next_path(&mut self, scalar: Option<&str>, pos: Pos) -> Option<String> {
        match self.stack.last_mut() {
            None => Some(String::new()),
            Some(Frame::Seq { path, index, .. }) => {
                let p = format!("{path}[{index}]");
                *index += 1;
                Some(p)
            }
            Some(Frame::Map { path, key, .. }) => match key.take() {
                Some(k) => Some(join(path, &k)),
                None => {
                    let k = scalar.unwrap_or("?").to_string();
                    let full = join(path, &k);
                    self.map.entry(format!("{full}#key")).or_insert(pos);
                    self.order.push((pos, full, None));
                    *key = Some(k);
                    None
                }
            },
        }
    }

    fn open_flows(&self) -> Vec<(char, Pos)> {
        self.stack
            .iter()
            .filter_map(|f| match f {
                Frame::Map { flow, .. } => flow.map(|p| ('{', p)),
                Frame::Seq { flow, .. } => flow.map(|p| ('[', p)),
            })
            .collect()
    }

    fn node(&mut self, path: String, pos: Pos, container: Option<&'static str>) {
        self.map.entry(path.clone()).or_insert(pos);
        self.order.push((pos, path, container));
    }

    fn on_event(&mut self, ev: Event<'_>, pos: Pos) {
        match ev {
            Event::Scalar(value, style, anchor, _) => {
                if let Some(p) = self.next_path(Some(&value), pos) {
                    let written = Written {
                        plain: style == ScalarStyle::Plain,
                        text: value.to_string(),
                    };
                    self.scalars.entry(p.clone()).or_insert(written);
                    self.anchor(anchor, &p);
                    self.node(p, pos, None);
                }
            }
            Event::Alias(id) => {
                if let Some(p) = self.next_path(Some("*alias"), pos) {
                    self.alias(id, &p);
                    self.node(p, pos, None);
                }
            }
            Event::MappingStart(style, anchor, _) => {
                let p = self.next_path(None, pos).unwrap_or_default();
                self.anchor(anchor, &p);
                self.node(p.clone(), pos, Some("a mapping"));
                self.stack.push(Frame::Map {
                    path: p,
                    key: None,
                    flow: (style == StructureStyle::Flow).then_some(pos),
                });
            }
            Event::SequenceStart(style, anchor, _) => {
                let p = self.next_path(None, pos).unwrap_or_default();
                self.anchor(anchor, &p);
                self.node(p.clone(), pos, Some("a list"));
                self.stack.push(Frame::Seq {
                    path: p,
                    index: 0,
                    flow: (style == StructureStyle::Flow).then_some(pos),
                });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                self.stack.pop();
            }
            _ => {}
        }
    }
}

impl Recorder {
    /// Anchor id 0 is a node without an anchor.
    fn anchor(&mut self, id: usize, path: &str) {
        if id != 0 {
            self.anchors.insert(id, path.to_string());
        }
    }

    /// The alias at `at` stands for the anchored node; a merge key's (`m.<<` or `m.<<[i]`)
    /// adds it to the mapping's merges.
    fn alias(&mut self, id: usize, at: &str) {
        let Some(anchor) = self.anchors.get(&id) else {
            return;
        };
        match merge_target(at) {
            Some(m) => (self.merges.entry(m.to_string()).or_default()).push(anchor.clone()),
            None => {
                self.aliases.insert(at.to_string(), anchor.clone());
            }
        }
    }
}

/// The mapping a merge key's alias merges into: `m` for `m.<<` and `m.<<[i]`.
fn merge_target(at: &str) -> Option<&str> {
    let head = match at.rfind("[") {
        Some(i) if at[..i].ends_with("<<") => &at[..i],
        _ => at,
    };
    let m = head.strip_suffix("<<")?;
    Some(m.strip_suffix('.').unwrap_or(m))
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
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

    #[test]
    fn an_alias_holds_its_anchors_scalars() {
        let text = "a: &n \"0x10\"\nb: *n\nc: &m {x: 1, y: '2'}\nd: *m\ne: {<<: *m, y: 3}\n\
                    f: {<<: [*m], x: '4'}\n";
        let idx = SpanIndex::build(text);
        let quoted = |p: &str| idx.scalar(p).map(|w| (w.plain, w.text.as_str()));
        assert_eq!(quoted("b"), Some((false, "0x10")));
        assert_eq!(quoted("d.x"), Some((true, "1")));
        assert_eq!(quoted("d.y"), Some((false, "2")));
        // A merged mapping's own keys win over the merged ones, before or after the merge.
        assert_eq!(quoted("e.x"), Some((true, "1")));
        assert_eq!(quoted("e.y"), Some((true, "3")));
        assert_eq!(quoted("f.x"), Some((false, "4")));
        assert_eq!(quoted("f.y"), Some((false, "2")));
        assert_eq!(quoted("e.z"), None);
    }

    #[test]
    fn aliases_of_aliases_are_looked_up_not_copied() {
        let mut text = String::from("a: &a [1, '2', {x: '3'}]\n");
        for (i, c) in ('b'..='j').enumerate() {
            let prev = (b'a' + i as u8) as char;
            text.push_str(&format!("{c}: &{c} [*{prev}, *{prev}, *{prev}]\n"));
        }
        text.push_str("m: &m {x: '3'}\nk: {<<: *m, own: 1}\n");
        let idx = SpanIndex::build(&text);
        // Only what the text holds: nothing of the 3^9 copies.
        assert!(idx.scalars.len() < 10, "{}", idx.scalars.len());
        let path = format!("j{}[1]", "[2]".repeat(9));
        assert_eq!(idx.scalar(&path).map(|w| w.text.as_str()), Some("2"));
        assert_eq!(idx.scalar("k.x").map(|w| w.text.as_str()), Some("3"));
        assert_eq!(idx.scalar("k.own").map(|w| w.plain), Some(true));
        let deep = format!("j{}[2].x", "[0]".repeat(9));
        assert_eq!(idx.scalar(&deep).map(|w| w.plain), Some(false));
    }
}
