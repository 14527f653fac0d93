import t from 'tap';
import { backupRoundTrips } from './helpers/backup-scale.ts';

/** See test/helpers/backup-scale.ts (split in files of their own so that each stays well under a minute). */
for (const pending of [10_000]) {
  t.test(`a backup with ${pending} pending log records restores, starts and serves everything; so does restore --until a random point`, (t) =>
    backupRoundTrips(t, pending));
}
