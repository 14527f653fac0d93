import { createHmac, randomBytes } from 'node:crypto';
import { sameKey } from './auth.ts';

/** How long a temporary link to an uploaded file works: the original's 60 seconds. */
export const UPLOAD_LINK_SECONDS = 60;

/**
 * Links to an uploaded file that work without credentials for a short time (GET /user_uploads/... in the
 * API), for clients that hand the file to something that cannot send them (a browser tab, a media player).
 * A link is signed, not stored: nothing accumulates however many are asked for. The key lives in memory
 * only, so a restart ends the links issued before it, which is within their purpose.
 */
export class UploadLinks {
  private readonly key = randomBytes(32);

  constructor(private readonly now: () => number) {}

  issue(realmId: number, pathId: string): string {
    const payload = Buffer.from(JSON.stringify({ r: realmId, p: pathId, e: Math.floor(this.now() / 1000) + UPLOAD_LINK_SECONDS })).toString('base64url');
    return `${payload}.${this.sign(payload)}`;
  }

  /** The file a link names, or null for a forged, expired or other realm's link. */
  redeem(token: string, realmId: number): string | null {
    const [payload, signature] = token.split('.');
    if (!payload || !signature || !sameKey(this.sign(payload), signature)) return null;
    let claims: { r?: unknown; p?: unknown; e?: unknown };
    try {
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return null;
    }
    if (claims.r !== realmId || typeof claims.p !== 'string' || typeof claims.e !== 'number' || claims.e * 1000 <= this.now()) return null;
    return claims.p;
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }
}
