import type { RealmState } from '../state.ts';
import type { InvitationChange } from './changes.ts';
import { addInvitation, forgetInvitation, noteMailed } from './state.ts';

export function applyInvitationChange(state: RealmState, change: InvitationChange): void {
  const store = state.invitations;
  switch (change.type) {
    case 'invitations.created':
      for (const invitation of change.invitations) addInvitation(store, structuredClone(invitation));
      if (!change.invitations[0]?.multiuse) noteMailed(store, change.invitations[0]?.invitedAt ?? 0, change.invitations.length);
      return;
    case 'invitation.revoked': {
      const invitation = (change.multiuse ? store.links : store.emails).get(change.id);
      if (invitation) invitation.status = 'revoked';
      return;
    }
    case 'invitation.resent': {
      const invitation = store.emails.get(change.id);
      if (!invitation) return;
      invitation.invitedAt = change.at;
      invitation.expiresAt = change.expiresAt;
      noteMailed(store, change.at, 1);
      return;
    }
    case 'invitation.used': {
      const used = store.emails.get(change.id);
      if (!used) return;
      used.status = 'used';
      // The address has its account: other invitations to it could only fail.
      const email = used.email!.toLowerCase();
      for (const other of store.emails.values()) {
        if (other.status === 'active' && other.email!.toLowerCase() === email) other.status = 'revoked';
      }
      return;
    }
    case 'invitations.forgotten':
      for (const id of change.ids) forgetInvitation(store, change.multiuse, id);
      return;
    default: {
      const unknown: never = change;
      throw new Error(`unknown invitation change ${JSON.stringify(unknown)}`);
    }
  }
}
