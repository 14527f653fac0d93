import { realmVersion } from '../realm/version.ts';
import type { RealmState } from '../realm/state.ts';
import type { Builder, InitialStateOptions, RegistrationView } from './builder.ts';

/** A section of the registration state as JSON fields (`"a":1,"b":2`, no braces), and the keys it holds. */
export interface SerializedSection {
  json: string;
  keys: ReadonlySet<string>;
}

/** Everything besides the realm's state a section depends on, compared value by value (`Object.is`). */
export type SectionInputs = (view: RegistrationView, options: InitialStateOptions) => readonly unknown[];

interface Entry {
  version: number;
  inputs: readonly unknown[];
  section: SerializedSection;
}

/**
 * Variants kept per realm between two of its changes: a spectator's and a user's registration differ, and
 * the server's options do not change while it runs.
 */
const MAX_VARIANTS = 4;

/**
 * A builder whose section is the same for every registration of a realm until the realm changes (see
 * realm/version.ts), given the same `inputs`: built and serialized once, then spliced into each answer.
 */
export function sharedSection(build: Builder, inputs: SectionInputs): (view: RegistrationView, options: InitialStateOptions) => SerializedSection {
  const cache = new WeakMap<RealmState, Entry[]>();
  return (view, options) => {
    const version = realmVersion(view.realm);
    const wanted = inputs(view, options);
    let entries = cache.get(view.realm);
    if (entries === undefined || entries[0]?.version !== version) cache.set(view.realm, (entries = []));
    const found = entries.find((entry) => sameInputs(entry.inputs, wanted));
    if (found) return found.section;
    const fields = build(view, options);
    const section = { json: JSON.stringify(fields).slice(1, -1), keys: new Set(Object.keys(fields)) };
    if (entries.length === MAX_VARIANTS) entries.shift();
    entries.push({ version, inputs: wanted, section });
    return section;
  };
}

function sameInputs(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((value, i) => Object.is(value, b[i]));
}
