/**
 * How many of the index's terms a prefix may stand for (CHAT_SEARCH_PREFIX_TERMS). A prefix with more is
 * matched as a whole word, as Zulip's own search matches every word: one or two letters (`a`, `th`) start
 * thousands of terms, and reading or merging all their matches costs in proportion to the history.
 */
export const DEFAULT_PREFIX_TERMS = 100;

/**
 * Plain JavaScript for the index's worker thread (snapshots/search-index.ts's READER_SOURCE, which has no
 * module of its own): `prefixExpander(db, tokenizer, limit)` returns a function that rewrites an FTS5
 * expression's prefix terms (`"walk"*`, as actors/realm/messages/search-query.ts writes them) into an OR of
 * the index's own terms with that prefix (`("walk" OR "walkthrough")`).
 *
 * Why: FTS5 answers a prefix term by merging the match lists of every term with the prefix, in full, before
 * it applies the rowid bounds: 75 ms at 2,000,000 messages for a prefix every message holds. An OR of terms
 * it walks lazily from the bound, like a single word: well under a millisecond.
 *
 * The terms are read from the index's segments (the FTS5 file format, fts5_index.c): `<table>_idx` holds,
 * per segment, the first term of each leaf page that starts a term, and each leaf page in `<table>_data`
 * (id `segid << 37 | page`) ends with a footer of its terms' offsets. The first term on a page is whole
 * (length, bytes), each later one shares a prefix with the one before (shared length, new length, bytes);
 * lengths are SQLite varints; main-index terms start with the byte '0'. fts5vocab would give the same
 * terms but counts every term's matches to do so (30 ms for that prefix). A term all of whose messages were
 * deleted may still be in a segment until FTS5 merges it away: its OR branch matches nothing. A segment
 * an incremental merge has begun to consume has lost its first pages (their terms are in the merge's
 * output) but not their `_idx` rows: pages before its first leaf still in `_data` are passed over.
 *
 * An expression is left as FTS5 reads it when a prefix is more than one token (`"foo-ba"*`, a phrase
 * ending in a prefix) or when one of its terms does not read back as itself through the tokenizer
 * (Porter stemming is not idempotent: the term `convers` reads as `conver`), so that matches never change.
 * So is it when a segment does not read as expected (a leaf page missing).
 * The function is given as source, so it must not refer to anything outside itself.
 */
export const PREFIX_SOURCE = String.raw`
function prefixExpander(db, tokenizer, limit) {
  db.exec("CREATE VIRTUAL TABLE temp.probe USING fts5(text, tokenize = '" + tokenizer.replace(/'/g, "''") + "')");
  db.exec("CREATE VIRTUAL TABLE temp.probe_tokens USING fts5vocab('temp', 'probe', 'instance')");
  const probePut = db.prepare('INSERT INTO temp.probe (rowid, text) VALUES (1, ?)');
  const probeRead = db.prepare('SELECT term, "offset" AS at FROM temp.probe_tokens ORDER BY "offset"');
  const probeClear = db.prepare('DELETE FROM temp.probe');
  const segments = db.prepare('SELECT DISTINCT segid FROM messages_idx').pluck();
  // A segment's first leaf that is still there: ids segid << 37 | page (doclist-index pages have bit 36).
  const firstLeaf = db.prepare('SELECT min(id) FROM messages_data WHERE id >= ? AND id < ?').pluck();
  const startPage = db.prepare('SELECT pgno FROM messages_idx WHERE segid = ? AND term <= ? ORDER BY term DESC LIMIT 1').pluck();
  const laterPages = db.prepare('SELECT pgno FROM messages_idx WHERE segid = ? AND term > ? AND pgno >= ? ORDER BY term').pluck();
  const leaf = db.prepare('SELECT block FROM messages_data WHERE id = ?').pluck();
  const MAIN = Buffer.from('0');

  // The tokenizer's tokens of text, by position (undefined where it made none).
  const tokens = (text) => {
    probePut.run(text);
    const found = [];
    for (const row of probeRead.all()) found[row.at] = row.term;
    probeClear.run();
    return found;
  };

  const varint = (block, at) => {
    let value = 0;
    for (let i = 0; i < 8; i++) {
      const byte = block[at++];
      value = value * 128 + (byte & 0x7f);
      if (byte < 0x80) return [value, at];
    }
    return [value * 256 + block[at], at + 1];
  };

  // The index's terms that start with token, sorted; null when there are more than limit.
  const termsStarting = (token) => {
    const key = Buffer.concat([MAIN, Buffer.from(token, 'utf8')]);
    const found = new Set();
    for (const segid of segments.all()) {
      let past = false;
      const base = BigInt(segid) * 137438953472n;
      const live = firstLeaf.get(base, base + 2147483648n);
      if (live === null) continue;
      // _idx's pgno is the page number times two (plus one when the page has a doclist index).
      const firstPgno = Number(BigInt(live) - base) * 2;
      const read = (pgno) => {
        const block = leaf.get(base + BigInt(pgno >> 1));
        if (block === undefined) throw new Error('search index: no leaf page ' + (pgno >> 1) + ' in segment ' + segid);
        let at = block.readUInt16BE(2);
        let offset = 0;
        let term = null;
        while (at < block.length) {
          let delta;
          [delta, at] = varint(block, at);
          offset += delta;
          let p = offset;
          let size;
          if (term === null) {
            [size, p] = varint(block, p);
            term = block.subarray(p, p + size);
          } else {
            let shared;
            [shared, p] = varint(block, p);
            [size, p] = varint(block, p);
            term = Buffer.concat([term.subarray(0, shared), block.subarray(p, p + size)]);
          }
          const order = Buffer.compare(term.subarray(0, key.length), key);
          if (order > 0) return (past = true);
          if (order === 0) found.add(term.subarray(1).toString('utf8'));
          if (found.size > limit) return (past = true);
        }
        return false;
      };
      // A start page before the first one still there was merged away: the next live page starts past key.
      const first = startPage.get(segid, key);
      if (first !== undefined && first >= firstPgno) read(first);
      if (!past) for (const pgno of laterPages.iterate(segid, key, firstPgno)) if (read(pgno)) break;
      if (found.size > limit) return null;
    }
    return [...found].sort();
  };

  const quoted = (term) => '"' + term.replace(/"/g, '""') + '"';

  const expand = (whole, inner) => {
    const text = inner.replace(/""/g, '"');
    const typed = tokens(text);
    if (typed.length !== 1) return whole;
    let terms;
    try {
      terms = termsStarting(typed[0]);
    } catch {
      return whole; // a page not as expected: FTS5 reads the prefix itself
    }
    // Past the limit, the word alone; with no term to start, the word too (it is not a term either).
    if (terms === null || terms.length === 0) return quoted(text);
    const read = tokens(terms.join(' '));
    if (read.length !== terms.length || terms.some((term, i) => read[i] !== term)) return whole;
    return '(' + terms.map(quoted).join(' OR ') + ')';
  };

  return (query) => query.replace(/"((?:[^"]|"")*)"\*/g, expand);
}
`;
