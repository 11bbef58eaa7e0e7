//! The generated web's Chinese sites: an origin and its mirror.

use nearcrawl_demo_web::{Article, Reply};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{Groups, SiteSpec, escape, listing, paragraphs_html};
use crate::truth::{Kind, PageTruth};

fn zh_template(title: &str, body: &str, rng: &mut ChaCha8Rng) -> String {
    format!(
        r#"<!doctype html><html lang="zh-CN"><head><meta charset="utf-8"><title>{t} - 中文文档站</title></head>
<body><header><a href="/">首页</a> <nav><a href="/">文档</a> <a href="/">关于我们</a></nav></header>
<main><article><h1>{t}</h1>{body}</article></main><aside>广告：限时优惠 {ad} 元</aside>
<footer>页面生成于 2026年{m}月{d}日，访问量 {v}</footer></body></html>"#,
        t = escape(title),
        ad = rng.random_range(10..999),
        m = rng.random_range(1..13),
        d = rng.random_range(1..29),
        v = rng.random_range(1..99_999),
    )
}

pub(super) fn zh_origin(
    articles: &[Article],
    groups_of: &[u64],
    groups: &mut Groups,
    rng: &mut ChaCha8Rng,
) -> SiteSpec {
    let mut site = SiteSpec::new();
    let links: Vec<(String, String)> = articles
        .iter()
        .enumerate()
        .map(|(i, a)| (format!("/zh/{i}.html"), a.title.clone()))
        .collect();
    for (i, article) in articles.iter().enumerate() {
        let page = zh_template(&article.title, &paragraphs_html(&article.paragraphs), rng);
        site.add(
            format!("/zh/{i}.html"),
            Reply::html(page),
            PageTruth::scored(groups_of[i], Kind::ZhOrigin),
        );
    }
    site.add(
        "/".into(),
        Reply::html(zh_template(
            "文档目录",
            &format!("<ul>{}</ul>", listing(&links)),
            rng,
        )),
        PageTruth::index(groups.next()),
    );
    site
}

pub(super) fn zh_mirror(
    articles: &[Article],
    groups_of: &[u64],
    groups: &mut Groups,
    rng: &mut ChaCha8Rng,
) -> SiteSpec {
    let mut site = SiteSpec::new();
    let gbk = |html: String| {
        let (bytes, _, _) = encoding_rs::GBK.encode(&html);
        Reply::ok("text/html; charset=GBK", bytes.into_owned())
    };
    let template = |title: &str, body: &str, rng: &mut ChaCha8Rng| {
        format!(
            r#"<html><head><meta http-equiv="Content-Type" content="text/html; charset=gb2312"><title>{t}（镜像）</title></head><body>
<div class="top">镜像站 | <a href="/">返回目录</a></div><div class="doc"><h2>{t}</h2>{body}</div>
<div class="foot">镜像时间：{h}小时前 · 本站编号 {id}</div></body></html>"#,
            t = escape(title),
            h = rng.random_range(1..72),
            id = rng.random_range(1000..9999),
        )
    };
    let links: Vec<(String, String)> = articles
        .iter()
        .enumerate()
        .map(|(i, a)| (format!("/jingxiang/{i}.htm"), a.title.clone()))
        .collect();
    for (i, article) in articles.iter().enumerate() {
        site.add(
            format!("/jingxiang/{i}.htm"),
            gbk(template(
                &article.title,
                &paragraphs_html(&article.paragraphs),
                rng,
            )),
            PageTruth::scored(groups_of[i], Kind::GbkMirror),
        );
    }
    site.add(
        "/".into(),
        gbk(template(
            "镜像目录",
            &format!("<ul>{}</ul>", listing(&links)),
            rng,
        )),
        PageTruth::index(groups.next()),
    );
    site
}
