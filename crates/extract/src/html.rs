//! A fast, forgiving HTML parser that builds a compact tree in one pass.
//!
//! It is not a full HTML5 tree builder (no adoption agency, no foster parenting), but it
//! follows the rules that shape text: void and raw-text elements, character references,
//! implied end tags for `p`, `li`, `dt`/`dd`, `option`, table rows and cells, headings and
//! nested links, and end tags that close everything opened inside them. Malformed input never
//! fails: it yields some tree, as a browser does.
//!
//! Nodes are stored in document order, so the descendants of node `i` are exactly the nodes
//! `i + 1 .. end(i)`; aggregates over subtrees are one reverse pass, with no child lists.

use std::ops::Range;

use memchr::memmem;

use crate::entity::decode_into;
use crate::tag::{Attr, Tag};

/// Index of a node in a [`Document`].
pub type NodeId = u32;

/// Deepest nesting kept; deeper elements are attached to the node at this depth.
const MAX_DEPTH: usize = 400;

/// One node of the tree.
#[derive(Clone, Debug)]
pub struct Node {
    /// `Some(tag)` for elements, `None` for text.
    pub tag: Option<Tag>,
    /// Parent element (the root's parent is itself).
    pub parent: NodeId,
    /// One past the last descendant: the subtree of `i` is `i..end`.
    pub end: NodeId,
    /// Text nodes: range in [`Document::text`]. Elements: range in [`Document::attrs`].
    data: Range<u32>,
}

/// An attribute kept by the parser, its value with references decoded.
#[derive(Clone, Debug)]
pub struct Attribute {
    /// Which attribute.
    pub name: Attr,
    value: Range<u32>,
}

/// A parsed HTML document.
#[derive(Clone, Debug, Default)]
pub struct Document {
    nodes: Vec<Node>,
    attrs: Vec<Attribute>,
    /// Decoded text of all text nodes and attribute values, back to back.
    text: String,
}

impl Document {
    /// Parses `html`. Never fails.
    pub fn parse(html: &str) -> Document {
        let mut builder = Builder::new(html.len());
        builder.run(html);
        builder.finish()
    }

    /// Number of nodes; node 0 is the synthetic root (an element with [`Tag::Other`]).
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True only for the empty document (just the root).
    pub fn is_empty(&self) -> bool {
        self.nodes.len() <= 1
    }

    /// The node with this id.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }

    /// All nodes in document order.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The text of a text node (raw whitespace kept); empty for elements.
    pub fn text(&self, id: NodeId) -> &str {
        let node = self.node(id);
        match node.tag {
            None => &self.text[node.data.start as usize..node.data.end as usize],
            Some(_) => "",
        }
    }

    /// The kept attributes of an element.
    pub fn attributes(&self, id: NodeId) -> &[Attribute] {
        let node = self.node(id);
        match node.tag {
            Some(_) => &self.attrs[node.data.start as usize..node.data.end as usize],
            None => &[],
        }
    }

    /// The value of attribute `name` on element `id`, if present.
    pub fn attr(&self, id: NodeId, name: Attr) -> Option<&str> {
        self.attributes(id)
            .iter()
            .find(|a| a.name == name)
            .map(|a| self.value(a))
    }

    /// The value of an attribute.
    pub fn value(&self, attribute: &Attribute) -> &str {
        &self.text[attribute.value.start as usize..attribute.value.end as usize]
    }

    /// Ids of the direct children of `id`.
    pub fn children(&self, id: NodeId) -> Children<'_> {
        Children {
            doc: self,
            next: id + 1,
            end: self.node(id).end,
        }
    }

    /// Concatenated text of the subtree of `id`, whitespace collapsed, blocks separated by a
    /// space.
    pub fn subtree_text(&self, id: NodeId) -> String {
        let mut out = String::new();
        for i in id..self.node(id).end {
            let node = self.node(i);
            match node.tag {
                None => push_collapsed(&mut out, self.text(i)),
                Some(tag) if tag.is_block() => push_collapsed(&mut out, " "),
                Some(_) => {}
            }
        }
        out.truncate(out.trim_end().len());
        out
    }

    /// The first element with this tag, in document order.
    pub fn first(&self, tag: Tag) -> Option<NodeId> {
        self.nodes
            .iter()
            .position(|n| n.tag == Some(tag))
            .map(|i| i as NodeId)
    }
}

/// `char::is_whitespace` for an ASCII byte: tab, line feed, vertical tab, form feed, carriage
/// return, space (`u8::is_ascii_whitespace` leaves out the vertical tab).
pub(crate) fn is_ascii_whitespace(b: u8) -> bool {
    matches!(b, b'\t'..=b'\r' | b' ')
}

/// Appends `text` to `out` with runs of whitespace collapsed to one space and no leading space.
pub(crate) fn push_collapsed(out: &mut String, text: &str) {
    // A byte at a time: stretches already collapsed (single spaces after other text) are
    // copied whole; only other whitespace (a line break, a tab, a second space, a space at
    // the start, a no-break space) cuts them. Whitespace beyond ASCII is led by one of four
    // bytes, so only characters led by those are decoded.
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut after_space = out.is_empty() || out.ends_with(' ');
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let (len, space) = match b {
            b' ' if !after_space => (1, false),
            _ if is_ascii_whitespace(b) => (1, true),
            0xC2 | 0xE1 | 0xE2 | 0xE3 => {
                let c = text[i..].chars().next().expect("a character starts here");
                (c.len_utf8(), c.is_whitespace())
            }
            _ => (1, false),
        };
        if space {
            out.push_str(&text[start..i]);
            if !out.is_empty() && !out.ends_with(' ') {
                out.push(' ');
            }
            start = i + len;
        }
        after_space = space || b == b' ';
        i += len;
    }
    out.push_str(&text[start..]);
}

/// Iterator over the children of a node.
pub struct Children<'a> {
    doc: &'a Document,
    next: NodeId,
    end: NodeId,
}

impl Iterator for Children<'_> {
    type Item = NodeId;

    fn next(&mut self) -> Option<NodeId> {
        if self.next >= self.end {
            return None;
        }
        let id = self.next;
        self.next = self.doc.node(id).end;
        Some(id)
    }
}

struct Builder {
    doc: Document,
    /// Open elements, root first, with a hash of the name of elements not in [`Tag`] (custom
    /// elements such as `<ps-header>` must match their own end tag).
    stack: Vec<(NodeId, Tag)>,
    other_names: Vec<(NodeId, u64)>,
    /// Depth inside `<svg>`/`<math>`, where `<x/>` closes itself.
    foreign: usize,
    /// Scratch for attribute names being lower-cased.
    name_buf: Vec<u8>,
}

impl Builder {
    fn new(len: usize) -> Builder {
        let mut doc = Document {
            nodes: Vec::with_capacity(len / 40),
            attrs: Vec::with_capacity(len / 60),
            text: String::with_capacity(len / 2),
        };
        doc.nodes.push(Node {
            tag: Some(Tag::Other),
            parent: 0,
            end: 1,
            data: 0..0,
        });
        Builder {
            doc,
            stack: vec![(0, Tag::Other)],
            other_names: Vec::new(),
            foreign: 0,
            name_buf: Vec::new(),
        }
    }

    fn finish(mut self) -> Document {
        while self.stack.len() > 1 {
            self.pop();
        }
        let n = self.doc.nodes.len() as NodeId;
        self.doc.nodes[0].end = n;
        self.doc
    }

    fn run(&mut self, html: &str) {
        let bytes = html.as_bytes();
        let mut pos = 0;
        while pos < bytes.len() {
            let Some(offset) = memchr::memchr(b'<', &bytes[pos..]) else {
                self.text(&html[pos..], true);
                break;
            };
            let lt = pos + offset;
            if lt > pos {
                self.text(&html[pos..lt], true);
            }
            pos = self.markup(html, lt);
        }
    }

    /// Handles the markup starting at `lt` (a `<`); returns where text resumes.
    fn markup(&mut self, html: &str, lt: usize) -> usize {
        let bytes = html.as_bytes();
        let rest = &bytes[lt..];
        match rest.get(1) {
            Some(b'!') => {
                if rest.starts_with(b"<!--") {
                    match memmem::find(&rest[4..], b"-->") {
                        Some(i) => lt + 4 + i + 3,
                        None => bytes.len(),
                    }
                } else {
                    skip_past(bytes, lt, b'>')
                }
            }
            Some(b'?') => skip_past(bytes, lt, b'>'),
            Some(b'/') => match rest.get(2) {
                Some(c) if c.is_ascii_alphabetic() => {
                    let name_end = scan_name(bytes, lt + 2);
                    let name = &bytes[lt + 2..name_end];
                    let tag = tag_of(name);
                    if tag == Tag::Other {
                        self.end_other(name_hash(name));
                    } else {
                        self.end_tag(tag);
                    }
                    skip_past(bytes, name_end, b'>')
                }
                _ => skip_past(bytes, lt, b'>'),
            },
            Some(c) if c.is_ascii_alphabetic() => self.start_tag(html, lt),
            _ => {
                self.text("<", false);
                lt + 1
            }
        }
    }

    fn start_tag(&mut self, html: &str, lt: usize) -> usize {
        let bytes = html.as_bytes();
        let name_end = scan_name(bytes, lt + 1);
        let tag = tag_of(&bytes[lt + 1..name_end]);
        let attrs_start = self.doc.attrs.len() as u32;
        let (after, self_closing) = self.attributes(html, name_end);
        let attrs = attrs_start..self.doc.attrs.len() as u32;
        self.implied_end_tags(tag);
        let id = self.push_node(Some(tag), attrs);
        let closes_itself = tag.is_void() || (self_closing && self.foreign > 0);
        if closes_itself {
            self.doc.nodes[id as usize].end = id + 1;
            return after;
        }
        if tag.is_raw_text() {
            let close = find_end_tag(bytes, after, &bytes[lt + 1..name_end]);
            let content = &html[after..close.unwrap_or(bytes.len())];
            self.stack.push((id, tag));
            if matches!(tag, Tag::Title | Tag::Textarea) {
                self.text(content, tag.decodes_references());
            }
            self.pop();
            return match close {
                Some(c) => skip_past(bytes, c, b'>'),
                None => bytes.len(),
            };
        }
        if matches!(tag, Tag::Svg | Tag::Math) {
            self.foreign += 1;
        }
        if self.stack.len() < MAX_DEPTH {
            if tag == Tag::Other {
                self.other_names
                    .push((id, name_hash(&bytes[lt + 1..name_end])));
            }
            self.stack.push((id, tag));
        } else {
            self.doc.nodes[id as usize].end = id + 1;
        }
        after
    }

    /// Parses attributes from `pos` (just after the tag name) to the closing `>`; keeps the
    /// ones listed in [`Attr`]. Returns the position after `>` and whether it was `/>`.
    fn attributes(&mut self, html: &str, mut pos: usize) -> (usize, bool) {
        let bytes = html.as_bytes();
        let mut self_closing = false;
        loop {
            while pos < bytes.len() && (bytes[pos].is_ascii_whitespace() || bytes[pos] == b'/') {
                self_closing = bytes[pos] == b'/';
                pos += 1;
            }
            if pos >= bytes.len() {
                return (pos, false);
            }
            if bytes[pos] == b'>' {
                return (pos + 1, self_closing);
            }
            self_closing = false;
            let name_start = pos;
            pos += 1;
            while pos < bytes.len()
                && !matches!(bytes[pos], b'=' | b'>' | b'/')
                && !bytes[pos].is_ascii_whitespace()
            {
                pos += 1;
            }
            let name = &bytes[name_start..pos];
            while pos < bytes.len() && bytes[pos].is_ascii_whitespace() {
                pos += 1;
            }
            let mut value = 0..0;
            if bytes.get(pos) == Some(&b'=') {
                pos += 1;
                while pos < bytes.len() && bytes[pos].is_ascii_whitespace() {
                    pos += 1;
                }
                match bytes.get(pos) {
                    Some(&quote @ (b'"' | b'\'')) => {
                        let end = memchr::memchr(quote, &bytes[pos + 1..])
                            .map_or(bytes.len(), |i| pos + 1 + i);
                        value = pos + 1..end;
                        pos = (end + 1).min(bytes.len());
                    }
                    _ => {
                        let start = pos;
                        while pos < bytes.len()
                            && bytes[pos] != b'>'
                            && !bytes[pos].is_ascii_whitespace()
                        {
                            pos += 1;
                        }
                        value = start..pos;
                    }
                }
            }
            self.name_buf.clear();
            self.name_buf
                .extend(name.iter().map(u8::to_ascii_lowercase));
            let attr = Attr::from_lowercase(&self.name_buf);
            if attr != Attr::Other {
                let start = self.doc.text.len() as u32;
                decode_into(&html[value], true, &mut self.doc.text);
                let end = self.doc.text.len() as u32;
                self.doc.attrs.push(Attribute {
                    name: attr,
                    value: start..end,
                });
            }
        }
    }

    /// The HTML rules that close open elements when `tag` starts.
    fn implied_end_tags(&mut self, tag: Tag) {
        use Tag::*;
        if tag.closes_paragraph() {
            self.close_in_scope(&[P], &[]);
        }
        match tag {
            Li => self.close_in_scope(&[Li], &[Ul, Ol, Menu]),
            Dt | Dd => self.close_in_scope(&[Dt, Dd], &[Dl]),
            Option => self.close_in_scope(&[Option], &[Select, Optgroup]),
            Tr => {
                self.close_in_scope(&[Td, Th], &[Tr]);
                self.close_in_scope(&[Tr], &[Tbody, Thead, Tfoot]);
            }
            Td | Th => self.close_in_scope(&[Td, Th], &[Tr]),
            Tbody | Thead | Tfoot => {
                self.close_in_scope(&[Td, Th], &[Tr]);
                self.close_in_scope(&[Tr], &[Tbody, Thead, Tfoot]);
                self.close_in_scope(&[Tbody, Thead, Tfoot], &[]);
            }
            A => self.close_in_scope(&[A], &[]),
            H1 | H2 | H3 | H4 | H5 | H6
                if self.stack.last().is_some_and(|(_, open)| open.is_heading()) =>
            {
                self.pop()
            }
            _ => {}
        }
    }

    /// Pops up to and including the nearest open element in `targets`, searching down the
    /// stack until a scope boundary or one of `stop_at`.
    fn close_in_scope(&mut self, targets: &[Tag], stop_at: &[Tag]) {
        for depth in (1..self.stack.len()).rev() {
            let open = self.stack[depth].1;
            if targets.contains(&open) {
                while self.stack.len() > depth {
                    self.pop();
                }
                return;
            }
            if open.is_scope_boundary() || stop_at.contains(&open) {
                return;
            }
        }
    }

    fn end_tag(&mut self, tag: Tag) {
        if tag == Tag::Br {
            let id = self.push_node(Some(Tag::Br), 0..0);
            self.doc.nodes[id as usize].end = id + 1;
            return;
        }
        if tag == Tag::Other || tag.is_void() {
            return;
        }
        if let Some(depth) = self.stack.iter().rposition(|(_, open)| *open == tag)
            && depth > 0
        {
            while self.stack.len() > depth {
                self.pop();
            }
        }
    }

    /// The end tag of an element not in [`Tag`]: closes the nearest open one with that name.
    fn end_other(&mut self, hash: u64) {
        let Some(&(id, _)) = self.other_names.iter().rev().find(|(_, h)| *h == hash) else {
            return;
        };
        if let Some(depth) = self.stack.iter().rposition(|(open, _)| *open == id) {
            while self.stack.len() > depth {
                self.pop();
            }
        }
    }

    fn pop(&mut self) {
        if let Some((id, tag)) = self.stack.pop() {
            if tag == Tag::Other && self.other_names.last().is_some_and(|(open, _)| *open == id) {
                self.other_names.pop();
            }
            if matches!(tag, Tag::Svg | Tag::Math) {
                self.foreign = self.foreign.saturating_sub(1);
            }
            self.doc.nodes[id as usize].end = self.doc.nodes.len() as NodeId;
        }
    }

    fn push_node(&mut self, tag: Option<Tag>, data: Range<u32>) -> NodeId {
        let id = self.doc.nodes.len() as NodeId;
        let parent = self.stack.last().map_or(0, |(p, _)| *p);
        self.doc.nodes.push(Node {
            tag,
            parent,
            end: id + 1,
            data,
        });
        id
    }

    fn text(&mut self, raw: &str, decode: bool) {
        let start = self.doc.text.len() as u32;
        if decode {
            decode_into(raw, false, &mut self.doc.text);
        } else {
            self.doc.text.push_str(raw);
        }
        let end = self.doc.text.len() as u32;
        // Adjacent text (split by a comment or a stray `<`) extends the previous text node.
        if let Some(last) = self.doc.nodes.last_mut() {
            let parent = self.stack.last().map_or(0, |(p, _)| *p);
            if last.tag.is_none() && last.data.end == start && last.parent == parent {
                last.data.end = end;
                return;
            }
        }
        self.push_node(None, start..end);
    }
}

fn tag_of(name: &[u8]) -> Tag {
    let mut lower = [0u8; 12];
    if name.len() > lower.len() {
        return Tag::Other;
    }
    for (dst, src) in lower.iter_mut().zip(name) {
        *dst = src.to_ascii_lowercase();
    }
    Tag::from_lowercase(&lower[..name.len()])
}

/// FNV-1a of the lower-cased name, without allocating (custom elements are common).
fn name_hash(name: &[u8]) -> u64 {
    name.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b.to_ascii_lowercase())).wrapping_mul(0x0100_0000_01b3)
    })
}

/// End of a tag name starting at `pos`.
fn scan_name(bytes: &[u8], mut pos: usize) -> usize {
    while pos < bytes.len()
        && !matches!(bytes[pos], b'>' | b'/')
        && !bytes[pos].is_ascii_whitespace()
    {
        pos += 1;
    }
    pos
}

/// Position after the next `byte` at or after `pos` (end of input when there is none).
fn skip_past(bytes: &[u8], pos: usize, byte: u8) -> usize {
    memchr::memchr(byte, &bytes[pos.min(bytes.len())..]).map_or(bytes.len(), |i| pos + i + 1)
}

/// Start of the end tag `</name` (any case, followed by space, `/` or `>`) at or after `pos`.
fn find_end_tag(bytes: &[u8], mut pos: usize, name: &[u8]) -> Option<usize> {
    let finder = memmem::Finder::new(b"</");
    while let Some(i) = finder.find(&bytes[pos..]) {
        let start = pos + i;
        let after = start + 2 + name.len();
        if after <= bytes.len()
            && bytes[start + 2..after].eq_ignore_ascii_case(name)
            && bytes
                .get(after)
                .is_none_or(|b| b.is_ascii_whitespace() || matches!(b, b'>' | b'/'))
        {
            return Some(start);
        }
        pos = start + 2;
    }
    None
}

#[cfg(test)]
mod tests;
