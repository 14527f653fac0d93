import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The mails in the outbox, oldest first: recipient, subject and the join link (bodies are quoted-printable). */
export function outbox(server: { dataDir: string }): { to: string; subject: string; link: string }[] {
  const dir = join(server.dataDir, 'outbox');
  let files: string[];
  try {
    files = readdirSync(dir).sort();
  } catch {
    return [];
  }
  return files.map((file) => {
    const mail = readFileSync(join(dir, file), 'utf8').replace(/=\r?\n/g, '').replace(/=3D/g, '=');
    return {
      to: /^To: (.+)$/m.exec(mail)?.[1]?.trim() ?? '',
      subject: /^Subject: (.+)$/m.exec(mail)?.[1]?.trim() ?? '',
      link: /(https?:\/\/\S+\/join\/[a-z0-9]+\/)/.exec(mail)?.[1] ?? '',
    };
  });
}

/** The key an invitation's join link carries. */
export const keyOf = (link: string) => /\/join\/([a-z0-9]+)\/$/.exec(link)![1]!;
