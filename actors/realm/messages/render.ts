import MarkdownIt from 'markdown-it';
import type { StateInline } from 'markdown-it';
import { canSeeChannel } from '../channels/views.ts';
import { activeEmoji } from '../emoji/state.ts';
import { emojiImagePath } from '../emoji/views.ts';
import { groupClosure } from '../groups/state.ts';
import type { RealmState } from '../state.ts';
import { realmVersion } from '../version.ts';
import { emojiCodeOf } from './emoji.ts';
import { useLinkifiers } from './render-links.ts';
import { plainParagraph } from './render-plain.ts';

/** What a rendering found, besides its HTML: the mentions that set flags. */
export interface Rendered {
  html: string;
  isMeMessage: boolean;
  /** users mentioned by name (not silently) */
  userIds: Set<number>;
  /** groups mentioned (not silently) */
  groupIds: Set<number>;
  streamWildcard: boolean;
  topicWildcard: boolean;
}

interface RenderEnv {
  realm: RealmState;
  senderId: number;
  found: Omit<Rendered, 'html' | 'isMeMessage'>;
}

/** realm -> lower-cased full name -> its active users' ids, with the realm version it was made at */
const activeNames = new WeakMap<RealmState, { version: number; names: Map<string, number[]> }>();

/**
 * The active users of each full name, kept until the realm next changes (realm/version.ts): made for every
 * message mentioning a user by name, it cost each such send 8-16 ms at 10,000 users (2026-11-30).
 */
function namesOf(realm: RealmState): Map<string, number[]> {
  const version = realmVersion(realm);
  const kept = activeNames.get(realm);
  if (kept && kept.version === version) return kept.names;
  const names = new Map<string, number[]>();
  for (const user of realm.users.values()) {
    if (!user.isActive) continue;
    const key = user.fullName.toLowerCase();
    const same = names.get(key);
    if (same) same.push(user.userId);
    else names.set(key, [user.userId]);
  }
  activeNames.set(realm, { version, names });
  return names;
}

const STREAM_WILDCARDS = new Set(['all', 'everyone', 'stream', 'channel']);

const md = new MarkdownIt({ html: false, linkify: true, breaks: true });
const escape = md.utils.escapeHtml;

/** Zulip syntax found at `state.pos`: returns the HTML and how many characters it used, or null. */
type Syntax = (text: string, env: RenderEnv) => { html: string; length: number } | null;

const userMention: Syntax = (text, env) => {
  const match = /^@(_?)\*\*([^*\n]+?)\*\*/.exec(text);
  if (!match) return null;
  const silent = match[1] === '_';
  const name = match[2]!;
  const lower = name.toLowerCase();
  if (STREAM_WILDCARDS.has(lower)) {
    if (!silent) env.found.streamWildcard = true;
    return { html: `<span class="user-mention channel-wildcard-mention${silent ? ' silent' : ''}" data-user-id="*">${silent ? '' : '@'}${escape(name)}</span>`, length: match[0].length };
  }
  if (lower === 'topic') {
    if (!silent) env.found.topicWildcard = true;
    return { html: `<span class="topic-mention${silent ? ' silent' : ''}">${silent ? '' : '@'}${escape(name)}</span>`, length: match[0].length };
  }
  const userId = findUser(env, name);
  if (userId === null) return null;
  if (!silent) env.found.userIds.add(userId);
  const fullName = env.realm.users.get(userId)!.fullName;
  return { html: `<span class="user-mention${silent ? ' silent' : ''}" data-user-id="${userId}">${silent ? '' : '@'}${escape(fullName)}</span>`, length: match[0].length };
};

/** `Name` or `Name|id`; an ambiguous name mentions nobody (the sender must give the id). */
function findUser(env: RenderEnv, text: string): number | null {
  const bar = text.lastIndexOf('|');
  if (bar >= 0 && /^\d+$/.test(text.slice(bar + 1))) {
    const user = env.realm.users.get(Number(text.slice(bar + 1)));
    return user && user.isActive ? user.userId : null;
  }
  const ids = namesOf(env.realm).get(text.toLowerCase());
  return ids && ids.length === 1 ? ids[0]! : null;
}

const groupMention: Syntax = (text, env) => {
  const match = /^@(_?)\*([^*\n]+?)\*/.exec(text);
  if (!match) return null;
  const silent = match[1] === '_';
  const group = [...env.realm.groups.values()].find((g) => !g.deactivated && g.name.toLowerCase() === match[2]!.toLowerCase());
  if (!group) return null;
  if (!silent) env.found.groupIds.add(group.id);
  return { html: `<span class="user-group-mention${silent ? ' silent' : ''}" data-user-group-id="${group.id}">${silent ? '' : '@'}${escape(group.name)}</span>`, length: match[0].length };
};

const channelLink: Syntax = (text, env) => {
  const match = /^#\*\*([^*\n]+?)\*\*/.exec(text);
  if (!match) return null;
  const [name, topic] = splitOnce(match[1]!, '>');
  const id = env.realm.channelIdByName.get(name.trim().toLowerCase());
  const channel = id === undefined ? undefined : env.realm.channels.get(id);
  if (!channel || !canSeeChannel(env.realm, channel, env.senderId)) return null;
  const base = `/#narrow/channel/${channel.id}-${encodeURIComponent(channel.name.replace(/ /g, '-'))}`;
  if (topic === undefined) {
    return { html: `<a class="stream" data-stream-id="${channel.id}" href="${escape(base)}">#${escape(channel.name)}</a>`, length: match[0].length };
  }
  const href = `${base}/topic/${encodeURIComponent(topic)}`;
  return { html: `<a class="stream-topic" data-stream-id="${channel.id}" href="${escape(href)}">#${escape(channel.name)} &gt; ${escape(topic)}</a>`, length: match[0].length };
};

/** `:name:`: the realm's active custom emoji of that name first (it overrides a built-in one), then Unicode. */
const emoji: Syntax = (text, env) => {
  const match = /^:([a-z0-9_+-]+):/.exec(text);
  if (!match) return null;
  const custom = activeEmoji(env.realm.emoji, match[1]!);
  if (custom) {
    const src = escape(emojiImagePath(env.realm.realmId, custom.fileName));
    return { html: `<img alt=":${custom.name}:" class="emoji" src="${src}" title="${custom.name.replace(/_/g, ' ')}">`, length: match[0].length };
  }
  const code = emojiCodeOf(match[1]!);
  if (!code) return null;
  const name = escape(match[1]!);
  return { html: `<span aria-label="${name.replace(/_/g, ' ')}" class="emoji emoji-${code}" role="img" title="${name.replace(/_/g, ' ')}">:${name}:</span>`, length: match[0].length };
};

/**
 * `$$x^2$$`: inline math, as the original's pattern takes it. The original typesets it on the server with
 * KaTeX; this server sends the TeX source in the same `katex` span, and clients typeset it (the web client
 * loads KaTeX when a message holds math), which keeps KaTeX off the send path.
 */
const inlineMath: Syntax = (text) => {
  const match = /^\$\$([^\n_$](?:\\\$|[^$\n])*)\$\$(?!\$)/.exec(text);
  if (!match) return null;
  return { html: `<span class="katex">${escape(match[1]!)}</span>`, length: match[0].length };
};

/** A ```math block: each paragraph one displayed formula, as in the original. */
function displayMath(source: string): string {
  return source.split(/\n\s*\n/).map((part) => part.trim()).filter(Boolean)
    .map((part) => `<p><span class="katex-display"><span class="katex">${escape(part)}</span></span></p>\n`).join('');
}

/** The fence languages the original typesets as math. */
const MATH_LANGUAGES = new Set(['math', 'tex', 'latex']);

function splitOnce(text: string, separator: string): [string, string | undefined] {
  const at = text.indexOf(separator);
  return at < 0 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}

function inlineRule(trigger: string, syntaxes: Syntax[]) {
  return (state: StateInline, silent: boolean): boolean => {
    if (state.src[state.pos] !== trigger) return false;
    const text = state.src.slice(state.pos, state.posMax);
    for (const syntax of syntaxes) {
      const found = syntax(text, state.env as unknown as RenderEnv);
      if (!found) continue;
      if (!silent) state.push('html_inline', '', 0).content = found.html;
      state.pos += found.length;
      return true;
    }
    return false;
  };
}

md.inline.ruler.before('emphasis', 'zulip_mention', inlineRule('@', [userMention, groupMention]));
md.inline.ruler.before('emphasis', 'zulip_channel_link', inlineRule('#', [channelLink]));
md.inline.ruler.before('emphasis', 'zulip_emoji', inlineRule(':', [emoji]));
md.inline.ruler.before('emphasis', 'zulip_math', inlineRule('$', [inlineMath]));
useLinkifiers(md);

// Fenced blocks: code in the original's markup, and the `quote`, `spoiler` and `math` blocks of Zulip's syntax.
md.renderer.rules.fence = (tokens, idx, _options, env) => {
  const token = tokens[idx]!;
  const [language = '', ...rest] = token.info.trim().split(/\s+/);
  if (MATH_LANGUAGES.has(language.toLowerCase())) return displayMath(token.content);
  if (language === 'quote') return `<blockquote>\n${md.render(token.content, env)}</blockquote>\n`;
  if (language === 'spoiler') {
    const header = rest.length ? md.render(rest.join(' '), env) : '';
    return `<div class="spoiler-block"><div class="spoiler-header">\n${header}</div><div class="spoiler-content" aria-hidden="true">\n${md.render(token.content, env)}</div></div>\n`;
  }
  const attribute = language ? ` data-code-language="${escape(language)}"` : '';
  return `<div class="codehilite"${attribute}><pre><span></span><code>${escape(token.content)}</code></pre></div>\n`;
};

/** Renders a message's Markdown with Zulip's syntax, as the sender sees the realm. */
export function renderMessage(realm: RealmState, senderId: number, content: string): Rendered {
  const plain = realm.linkifiers.compiled.length === 0 ? plainParagraph(content) : null;
  if (plain !== null && !md.linkify.pretest(content)) {
    return { html: plain, isMeMessage: false, userIds: new Set(), groupIds: new Set(), streamWildcard: false, topicWildcard: false };
  }
  return renderWithMarkdownIt(realm, senderId, content);
}

/** renderMessage without its shortcut for plain lines (render-plain.ts), which must give the same HTML. */
export function renderWithMarkdownIt(realm: RealmState, senderId: number, content: string): Rendered {
  const env: RenderEnv = {
    realm,
    senderId,
    found: { userIds: new Set(), groupIds: new Set(), streamWildcard: false, topicWildcard: false },
  };
  const html = md.render(content, env as unknown as Record<string, unknown>).trim();
  // The original: a one-line message starting with "/me " is a status message.
  const isMeMessage = content.startsWith('/me ') && !content.includes('\n');
  return { html, isMeMessage, ...env.found };
}

/** Every user a group mention reaches: the members of the group and of its subgroups. */
export function groupMembers(realm: RealmState, groupId: number): Set<number> {
  const out = new Set<number>();
  for (const id of groupClosure(realm, groupId)) for (const member of realm.groups.get(id)?.members ?? []) out.add(member);
  return out;
}
