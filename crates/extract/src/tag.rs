//! Element and attribute names the extractor cares about, interned to small enums.

macro_rules! names {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($variant:ident = $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[allow(missing_docs)]
        $vis enum $name {
            $($variant,)*
            /// Any name not listed above.
            Other,
        }

        impl $name {
            /// The name for lower-cased ASCII bytes; [`Self::Other`] when not listed.
            pub fn from_lowercase(name: &[u8]) -> Self {
                match name {
                    $($text => Self::$variant,)*
                    _ => Self::Other,
                }
            }
        }
    };
}

names! {
    /// An HTML element name.
    pub enum Tag {
        A = b"a", Abbr = b"abbr", Address = b"address", Area = b"area", Article = b"article",
        Aside = b"aside", Audio = b"audio", B = b"b", Base = b"base", Blockquote = b"blockquote",
        Body = b"body", Br = b"br", Button = b"button", Canvas = b"canvas", Caption = b"caption",
        Center = b"center", Code = b"code", Col = b"col", Colgroup = b"colgroup", Dd = b"dd",
        Details = b"details", Dialog = b"dialog", Div = b"div", Dl = b"dl", Dt = b"dt", Em = b"em",
        Embed = b"embed", Fieldset = b"fieldset", Figcaption = b"figcaption", Figure = b"figure",
        Font = b"font", Footer = b"footer", Form = b"form", Frame = b"frame", H1 = b"h1", H2 = b"h2",
        H3 = b"h3", H4 = b"h4", H5 = b"h5", H6 = b"h6", Head = b"head", Header = b"header",
        Hgroup = b"hgroup", Hr = b"hr", Html = b"html", I = b"i", Iframe = b"iframe", Img = b"img",
        Input = b"input", Keygen = b"keygen", Label = b"label", Legend = b"legend", Li = b"li",
        Link = b"link", Main = b"main", Math = b"math", Menu = b"menu", Meta = b"meta", Nav = b"nav",
        Noembed = b"noembed", Noframes = b"noframes", Noscript = b"noscript", Object = b"object",
        Ol = b"ol", Optgroup = b"optgroup", Option = b"option", P = b"p", Param = b"param",
        Picture = b"picture", Plaintext = b"plaintext", Pre = b"pre", Q = b"q", S = b"s",
        Script = b"script", Section = b"section", Select = b"select", Small = b"small",
        Source = b"source", Span = b"span", Strong = b"strong", Style = b"style", Sub = b"sub",
        Summary = b"summary", Sup = b"sup", Svg = b"svg", Table = b"table", Tbody = b"tbody",
        Td = b"td", Template = b"template", Textarea = b"textarea", Tfoot = b"tfoot", Th = b"th",
        Thead = b"thead", Time = b"time", Title = b"title", Tr = b"tr", Track = b"track", U = b"u",
        Ul = b"ul", Video = b"video", Wbr = b"wbr", Xmp = b"xmp",
    }
}

names! {
    /// An attribute name the parser keeps; all others are skipped while parsing.
    pub enum Attr {
        AriaHidden = b"aria-hidden", Charset = b"charset", Class = b"class", Content = b"content",
        Hidden = b"hidden", Href = b"href", HttpEquiv = b"http-equiv", Id = b"id",
        Itemprop = b"itemprop", Lang = b"lang", Name = b"name", Property = b"property",
        Rel = b"rel", Role = b"role", Style = b"style",
    }
}

impl Tag {
    /// Elements that never have content (`<br>`, `<img>`, ...).
    pub fn is_void(self) -> bool {
        use Tag::*;
        matches!(
            self,
            Area | Base
                | Br
                | Col
                | Embed
                | Hr
                | Img
                | Input
                | Keygen
                | Link
                | Meta
                | Param
                | Source
                | Track
                | Wbr
                | Frame
        )
    }

    /// Elements whose content is raw text up to the matching end tag (`<script>`, `<style>`).
    /// `noscript` is read as raw text, as a browser with scripting enabled does.
    pub fn is_raw_text(self) -> bool {
        use Tag::*;
        matches!(
            self,
            Script
                | Style
                | Xmp
                | Iframe
                | Noembed
                | Noframes
                | Noscript
                | Textarea
                | Title
                | Plaintext
        )
    }

    /// Raw-text elements whose character references are still decoded (RCDATA).
    pub fn decodes_references(self) -> bool {
        matches!(self, Tag::Title | Tag::Textarea)
    }

    /// Elements that start a new block of text when rendered.
    pub fn is_block(self) -> bool {
        use Tag::*;
        matches!(
            self,
            Address
                | Article
                | Aside
                | Blockquote
                | Body
                | Br
                | Caption
                | Center
                | Dd
                | Details
                | Dialog
                | Div
                | Dl
                | Dt
                | Fieldset
                | Figcaption
                | Figure
                | Footer
                | Form
                | H1
                | H2
                | H3
                | H4
                | H5
                | H6
                | Header
                | Hgroup
                | Hr
                | Html
                | Legend
                | Li
                | Main
                | Menu
                | Nav
                | Ol
                | Option
                | P
                | Pre
                | Section
                | Summary
                | Table
                | Tbody
                | Td
                | Tfoot
                | Th
                | Thead
                | Title
                | Tr
                | Ul
        )
    }

    /// Start tags that close an open `<p>` (the HTML "close a p element" rule).
    pub(crate) fn closes_paragraph(self) -> bool {
        use Tag::*;
        matches!(
            self,
            Address
                | Article
                | Aside
                | Blockquote
                | Center
                | Details
                | Dialog
                | Div
                | Dl
                | Fieldset
                | Figcaption
                | Figure
                | Footer
                | Form
                | H1
                | H2
                | H3
                | H4
                | H5
                | H6
                | Header
                | Hgroup
                | Hr
                | Main
                | Menu
                | Nav
                | Ol
                | P
                | Pre
                | Section
                | Summary
                | Table
                | Ul
                | Plaintext
                | Xmp
        )
    }

    /// Elements an implied end tag search does not cross (table cells, buttons, the root).
    pub(crate) fn is_scope_boundary(self) -> bool {
        use Tag::*;
        matches!(
            self,
            Html | Table | Td | Th | Caption | Button | Template | Object | Svg | Math
        )
    }

    /// `h1` ... `h6`.
    pub fn is_heading(self) -> bool {
        matches!(
            self,
            Tag::H1 | Tag::H2 | Tag::H3 | Tag::H4 | Tag::H5 | Tag::H6
        )
    }
}
