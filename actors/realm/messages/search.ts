import type { SearchIndex } from '../../search-index.ts';
import type { RealmState } from '../state.ts';
import { idMatcher, type Clause } from './narrow.ts';
import { IdSet } from './id-set.ts';
import { IdList } from './id-list.ts';
import { candidateLists, DEFAULT_NARROW_SLICE_IDS, idsBeyond, resolved, type Candidates, type Window, type WindowResult } from './query.ts';

/** Ids per look-up in the index by id: a bounded amount of work per turn of the event loop. */
const CHUNK = 1000;
/** The first page of matches read from the index; each further one doubles, up to MAX_PAGE. */
const FIRST_PAGE = 100;
const MAX_PAGE = 10_000;

export const hasSearch = (clauses: readonly Clause[]) => clauses.some((clause) => clause.kind === 'search');

/**
 * The narrow's search clauses as index queries: `positive`, what every result matches (its words and
 * phrases, minus the negated ones), or, with only negated clauses, `excluded`, what no result matches.
 */
function searchQueries(clauses: readonly Clause[]): { positive: string | null; excluded: string | null } {
  const positive: string[] = [];
  const negated: string[] = [];
  for (const clause of clauses) if (clause.kind === 'search') (clause.negated ? negated : positive).push(`(${clause.query})`);
  if (positive.length === 0) return { positive: null, excluded: negated.length ? negated.join(' OR ') : null };
  return { positive: [positive.join(' AND '), ...negated].join(' NOT '), excluded: null };
}

/** Those of `ids` that match the narrow's search clauses (the other clauses are not checked), in order. */
export async function searchFilter(index: SearchIndex, realmId: number, clauses: readonly Clause[], ids: readonly number[]): Promise<number[]> {
  const { positive, excluded } = searchQueries(clauses);
  const query = positive ?? excluded;
  if (query === null) return [...ids];
  const kept: number[] = [];
  for (let start = 0; start < ids.length; start += CHUNK) {
    const chunk = ids.slice(start, start + CHUNK);
    const hits = await index.matching(realmId, query, chunk);
    for (const id of chunk) if (hits.has(id) === (positive !== null)) kept.push(id);
  }
  return kept;
}

/**
 * The messages of a narrow with search clauses around an anchor, as fetchWindow answers for the others.
 * With a positive search the index leads: its matches, read in pages outwards from the anchor, are checked
 * against the rest of the narrow (and the user's access) in memory. With only negated ones, the narrow's
 * candidate lists lead, in chunks the index then filters. Between pages the event loop serves others.
 */
export async function fetchSearchWindow(
  index: SearchIndex, state: RealmState, userId: number, clauses: readonly Clause[], window: Window, sliceIds = DEFAULT_NARROW_SLICE_IDS,
): Promise<WindowResult> {
  const ok = idMatcher(state, userId, clauses);
  const { positive } = searchQueries(clauses);
  let older: number[];
  let newer: number[];
  if (positive !== null) {
    const collect = async (direction: 'before' | 'after', want: number) => {
      const found: number[] = [];
      let bound = window.anchor;
      // Nothing lies beyond the ends: no index read (a prefix search costs as much with an empty range).
      if (direction === 'after' ? bound >= state.messages.nextId - 1 : bound <= 1) return found;
      for (let page = FIRST_PAGE; found.length < want; page = Math.min(page * 2, MAX_PAGE)) {
        const ids = await index.search(state.realmId, positive, direction, bound, page);
        for (const id of ids) if (found.length < want && ok(id)) found.push(id);
        if (ids.length < page) break;
        bound = ids[ids.length - 1]!;
      }
      return found;
    };
    older = await collect('before', window.numBefore + 1);
    newer = await collect('after', window.numAfter + 1);
  } else {
    const before = new Set<number>();
    const after = new Set<number>();
    for (const list of candidateLists(state, userId, clauses)) {
      for (const id of await walk(index, state, clauses, list, window.anchor, -1, window.numBefore + 1, ok, sliceIds)) before.add(id);
      for (const id of await walk(index, state, clauses, list, window.anchor, 1, window.numAfter + 1, ok, sliceIds)) after.add(id);
    }
    older = [...before].sort((a, b) => b - a);
    newer = [...after].sort((a, b) => a - b);
  }
  const foundAnchor = window.includeAnchor && ok(window.anchor) && (await searchFilter(index, state.realmId, clauses, [window.anchor])).length === 1;
  // Messages deleted while the index was read are left out.
  const live = (id: number) => state.messages.byId.has(id);
  const ids = [...older.slice(0, window.numBefore).reverse(), ...(foundAnchor ? [window.anchor] : []), ...newer.slice(0, window.numAfter)].filter(live);
  return { ids, foundAnchor, foundOldest: older.length <= window.numBefore, foundNewest: newer.length <= window.numAfter };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Up to `want` ids of `list` beyond `from` (an id) in steps of `step` that pass `ok` and the search clauses.
 * At most `sliceIds` ids are examined between two turns of the event loop; each chunk finds
 * its place again by the last id examined, as messages may be sent or deleted while the index is read.
 */
async function walk(
  index: SearchIndex, state: RealmState, clauses: readonly Clause[], candidates: Candidates, from: number, step: 1 | -1, want: number, ok: (id: number) => boolean, sliceIds: number,
): Promise<number[]> {
  const list = await inOrder(candidates, sliceIds);
  const found: number[] = [];
  let last = from;
  for (;;) {
    const chunk: number[] = [];
    let examined = 0;
    let end = true;
    for (const id of idsBeyond(list, last, step === -1)) {
      if (chunk.length >= CHUNK || examined >= sliceIds) {
        end = false;
        break;
      }
      last = id;
      examined++;
      if (ok(id)) chunk.push(id);
    }
    if (chunk.length === 0) {
      if (end) return found;
      await nextTurn();
      continue;
    }
    for (const id of await searchFilter(index, state.realmId, clauses, chunk)) if (found.length < want) found.push(id);
    if (end || found.length >= want) return found;
  }
}

/**
 * The candidates in id order: a plain Set (the ids a user is mentioned in) copied into an IdSet, `sliceIds`
 * ids per turn of the event loop (the Set's iterator sees what changes meanwhile; matches are checked by id).
 */
async function inOrder(list: Candidates, sliceIds: number): Promise<readonly number[] | IdList | IdSet> {
  const candidates = resolved(list);
  if (Array.isArray(candidates) || candidates instanceof IdSet || candidates instanceof IdList) return candidates as readonly number[] | IdList | IdSet;
  const ordered = new IdSet();
  let copied = 0;
  for (const id of candidates as ReadonlySet<number>) {
    ordered.add(id);
    if (++copied % sliceIds === 0) await nextTurn();
  }
  return ordered;
}

/** The oldest unread message matching a narrow with search clauses, or null. */
export async function firstUnreadSearch(
  index: SearchIndex, state: RealmState, userId: number, clauses: readonly Clause[], sliceIds = DEFAULT_NARROW_SLICE_IDS,
): Promise<number | null> {
  const unread = state.messages.flags.unread.get(userId) ?? [];
  const [first] = await walk(index, state, clauses, unread, 0, 1, 1, idMatcher(state, userId, clauses), sliceIds);
  return first ?? null;
}
