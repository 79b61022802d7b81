// The pages' words in English, Vietnamese and Thai. The words are in i18n.json: key -> {en, vi, th}, with {name}
// placeholders. Loaded by every page before its own script, which starts once ``I18N.ready`` resolves.
//
// The language: ?lang=en|vi|th wins; else the one last chosen on the language switch (kept in this browser); else the
// overlay's table language (``I18N.prefer``); else the browser's language when it is Vietnamese or Thai; else English.
// An unknown ?lang= counts as absent.
//
// The switch: every page but the overlay (whose language is its table's) shows the three languages, each written in
// itself, at its top right (or in an element marked data-languages, where a page has a place for it). Choosing one
// keeps it and shows the page again in it.
//
// Static HTML is translated by attributes: data-i18n="key" sets an element's text (children marked
// data-i18n-slot="name" stay, put where the text has {name}); data-i18n-placeholder, data-i18n-title and
// data-i18n-aria-label set those attributes; data-i18n-document-title on <html> sets the document's title.
"use strict";

const I18N = (() => {
  const LANGUAGES = ["en", "vi", "th"];
  const LOCALES = { en: "en", vi: "vi-VN", th: "th-TH" };
  const root = document.documentElement;
  const ATTRIBUTES = { placeholder: "i18nPlaceholder", title: "i18nTitle", "aria-label": "i18nAriaLabel" };
  let words = {};

  const known = (lang) => (LANGUAGES.includes(lang) ? lang : null);
  const NAMES = { en: "English", vi: "Tiếng Việt", th: "ไทย" }; // each in itself: a reader finds their own
  const CHOSEN = "studio.lang";
  const stored = () => { try { return localStorage.getItem(CHOSEN); } catch { return null; } }; // storage may be off
  const switchable = !root.hasAttribute("data-no-languages"); // the overlay speaks its table's language
  const asked = known(new URLSearchParams(location.search).get("lang")) || (switchable ? known(stored()) : null);
  const browser = known(String(navigator.language || "").toLowerCase().slice(0, 2)) || "en";

  const i18n = { languages: LANGUAGES, asked, lang: asked || browser, locale: LOCALES[asked || browser] };

  // The text of ``key`` in the page's language (English where it has none, the key where nobody has it).
  function raw(key) {
    const entry = words[key];
    return entry ? entry[i18n.lang] || entry.en : key;
  }

  // Plurals: a key with a ``key_one`` beside it ("{n} cards" / "{n} card") takes that one when its count — the first
  // of these parameters that is a whole number — is "one" in the page's language (Vietnamese and Thai have no
  // plural forms: always the key itself).
  const COUNTS = ["n", "points", "total", "units"];
  function counted(key, params) {
    if (!(key + "_one" in words)) return key;
    const count = COUNTS.map((name) => params[name]).find((value) => /^[+-]?\d+$/.test(String(value))); // "+1" too
    if (count === undefined) return key;
    return new Intl.PluralRules(i18n.locale).select(Number(count)) === "one" ? key + "_one" : key;
  }

  // ``key``'s text with each {name} replaced by ``params[name]``.
  function t(key, params = {}) {
    return raw(counted(key, params)).replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole));
  }

  // ``key``'s text as parts to append to an element: strings, and the nodes (or strings) ``params`` gives.
  function nodes(key, params = {}) {
    return raw(counted(key, params)).split(/\{(\w+)\}/) // text, name, text, name, …
      .map((part, index) => (index % 2 ? (part in params ? params[part] : "{" + part + "}") : part))
      .filter((part) => part !== "");
  }

  const has = (key) => key in words;

  function translateText(node) {
    if (!has(node.dataset.i18n)) return; // the words did not load: the page's English stays
    const slots = {};
    for (const child of node.children) if (child.dataset.i18nSlot) slots[child.dataset.i18nSlot] = child;
    if (Object.keys(slots).length) node.replaceChildren(...nodes(node.dataset.i18n, slots));
    else node.textContent = t(node.dataset.i18n);
  }

  // Every marked element under ``top`` (the whole page by default) in the page's language.
  function translate(top = document) {
    for (const node of top.querySelectorAll("[data-i18n]")) translateText(node);
    for (const [attribute, data] of Object.entries(ATTRIBUTES)) {
      for (const node of top.querySelectorAll(`[data-i18n-${attribute}]`)) {
        if (has(node.dataset[data])) node.setAttribute(attribute, t(node.dataset[data]));
      }
    }
    if (has(root.dataset.i18nDocumentTitle)) document.title = t(root.dataset.i18nDocumentTitle);
  }

  // Shows the page in ``lang`` (ignored unless it is one of ours).
  function use(lang) {
    if (!known(lang)) return;
    i18n.lang = lang;
    i18n.locale = LOCALES[lang];
    root.lang = lang;
    translate();
  }

  // Keeps ``lang`` as this browser's choice and shows the page again in it (the URL's ?lang=, if any, follows).
  function choose(lang) {
    if (!known(lang)) return;
    try { localStorage.setItem(CHOSEN, lang); } catch { /* not kept: the URL still carries it */ }
    const url = new URL(location.href);
    url.searchParams.set("lang", lang);
    location.replace(url.href);
  }

  // The language switch: a button per language, the page's own pressed.
  function switcher() {
    if (!switchable) return;
    const nav = document.querySelector("[data-languages]") || document.body.appendChild(document.createElement("nav"));
    nav.classList.add("languages");
    nav.setAttribute("aria-label", "Language · Ngôn ngữ · ภาษา");
    nav.replaceChildren(...LANGUAGES.map((lang) => {
      const button = document.createElement("button");
      Object.assign(button, { type: "button", lang, textContent: NAMES[lang] });
      button.dataset.lang = lang;
      button.setAttribute("aria-pressed", String(lang === i18n.lang));
      button.addEventListener("click", () => choose(lang));
      return button;
    }));
  }

  // The overlay: the table's language, unless ?lang= named one.
  function prefer(lang) {
    use(asked || known(lang) || browser);
  }

  // Numbers as the language writes them: ``digits`` fixes the decimals (as toFixed does).
  function number(value, digits) {
    const options = digits === undefined ? {} : { minimumFractionDigits: digits, maximumFractionDigits: digits };
    return new Intl.NumberFormat(i18n.locale, options).format(value);
  }

  const dateTime = (iso) => (iso ? new Date(iso).toLocaleString(i18n.locale) : "");
  const time = (iso) => (iso ? new Date(iso).toLocaleTimeString(i18n.locale) : "");

  root.lang = i18n.lang;
  if (i18n.lang !== "en") root.dataset.i18nLoading = ""; // hidden (studio.css) until translated: no English flash

  const loaded = fetch("/static/i18n.json", { cache: "no-cache" }) // revalidated: never an old copy's keys
    .then((response) => (response.ok ? response.json() : {}))
    .catch(() => ({}))
    .then((dictionary) => { words = dictionary; });
  const parsed = document.readyState === "loading"
    ? new Promise((resolve) => document.addEventListener("DOMContentLoaded", resolve, { once: true }))
    : Promise.resolve();
  i18n.ready = Promise.all([loaded, parsed]).then(() => {
    use(i18n.lang);
    switcher();
    delete root.dataset.i18nLoading;
  });

  return Object.assign(i18n, { t, nodes, has, translate, use, prefer, choose, number, dateTime, time });
})();

const t = I18N.t;
