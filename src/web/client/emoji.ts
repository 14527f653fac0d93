import type { Json } from './api.ts';

/** An emoji a person can pick: by name, as a reaction names it (`reaction_type`, `emoji_code`). */
export interface EmojiChoice {
  name: string;
  code: string;
  type: 'unicode_emoji' | 'realm_emoji';
  /** the image of a custom emoji */
  url?: string;
}

/** The Unicode emoji's code points as text: `1f468-200d-1f4bb` → 👨‍💻. */
export function glyphOf(code: string): string | null {
  try {
    return String.fromCodePoint(...code.split('-').map((hex) => parseInt(hex, 16)));
  } catch {
    return null;
  }
}

/**
 * The emoji this realm knows: the server's Unicode names (its `server_emoji_data_url`) and the realm's
 * active custom emoji (`realm_emoji`, kept current by its events). Custom ones come first, as they override
 * a Unicode emoji of the same name.
 */
export class EmojiCatalog {
  private unicode: EmojiChoice[] = [];
  private custom: EmojiChoice[] = [];
  /** deactivated ones too, which old reactions still show */
  private customById = new Map<string, EmojiChoice>();
  private loading: Promise<void> | null = null;

  setCustom(realmEmoji: Record<string, Json>): void {
    const all = Object.values(realmEmoji ?? {}).map((emoji) => ({ name: emoji.name as string, code: String(emoji.id), type: 'realm_emoji' as const, url: emoji.source_url as string, active: !emoji.deactivated }));
    this.customById = new Map(all.map(({ active: _, ...emoji }) => [emoji.code, emoji]));
    this.custom = all.filter((emoji) => emoji.active).map(({ active: _, ...emoji }) => emoji).sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Fetches the Unicode names once; a failure leaves the list empty and is tried again next time. */
  load(url: string): Promise<void> {
    this.loading ??= fetch(url).then((response) => response.json()).then((data: { code_to_names: Record<string, string[]> }) => {
      this.unicode = Object.entries(data.code_to_names).flatMap(([code, names]) => names.map((name) => ({ name, code, type: 'unicode_emoji' as const })));
    }).catch(() => {
      this.loading = null;
    });
    return this.loading;
  }

  /** Choices whose name holds every word of the query (`thumbs up` finds thumbs_up), prefix matches first. */
  search(query: string, limit = Infinity): EmojiChoice[] {
    const words = query.toLowerCase().split(/[\s_]+/).filter(Boolean);
    const custom = new Set(this.custom.map((emoji) => emoji.name));
    const all = [...this.custom, ...this.unicode.filter((emoji) => !custom.has(emoji.name))];
    const found = all.filter((emoji) => words.every((word) => emoji.name.includes(word)));
    const first = words[0] ?? '';
    found.sort((a, b) => Number(!a.name.startsWith(first)) - Number(!b.name.startsWith(first)));
    // One emoji of several names (+1, thumbs_up) is offered once, by its best-matching name.
    const seen = new Set<string>();
    return found.filter((emoji) => !seen.has(`${emoji.type}:${emoji.code}`) && seen.add(`${emoji.type}:${emoji.code}`)).slice(0, limit);
  }

  byCode(type: string, code: string): EmojiChoice | undefined {
    return type === 'realm_emoji' ? this.customById.get(code) : undefined;
  }
}
