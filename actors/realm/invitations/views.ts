import { isAdmin, type RealmState, type UserProfile } from '../state.ts';
import { isUsable, type Invitation } from './state.ts';
import type { WireSchema } from '../../wire/events.ts';

/** May the user manage (see, revoke, resend) the invitation? Administrators all; others those they made. */
export const managesInvitation = (user: UserProfile, invitation: Invitation) => isAdmin(user) || invitation.invitedBy === user.userId;

/** GET /invites: the usable invitations the viewer manages, email invitations first, oldest first. */
export function visibleInvitations(state: RealmState, viewer: UserProfile, now: number): Invitation[] {
  const out: Invitation[] = [];
  for (const invitation of [...state.invitations.emails.values(), ...state.invitations.links.values()]) {
    if (isUsable(invitation, now) && managesInvitation(viewer, invitation)) out.push(invitation);
  }
  return out;
}

/** The API's Invite object; `linkUrl` makes a link's URL from its key (the front end knows the realm's URL). */
export function invitationView(invitation: Invitation, linkUrl: (key: string) => string): WireSchema<'Invite'> {
  const view: WireSchema<'Invite'> = {
    id: invitation.id,
    invited_by_user_id: invitation.invitedBy,
    invited: invitation.invitedAt,
    expiry_date: invitation.expiresAt,
    invited_as: invitation.invitedAs,
    notify_referrer_on_join: invitation.notifyReferrerOnJoin,
    is_multiuse: invitation.multiuse,
  };
  if (invitation.multiuse) view.link_url = linkUrl(invitation.key);
  else if (invitation.email !== null) view.email = invitation.email;
  return view;
}

/** Who hears `invites_changed`: the active administrators and the invitation's maker. */
export function invitationWatchers(state: RealmState, makerId: number): number[] {
  const out = new Set<number>();
  for (const user of state.users.values()) if (user.isActive && !user.isBot && isAdmin(user)) out.add(user.userId);
  if (state.users.get(makerId)?.isActive) out.add(makerId);
  return [...out].sort((a, b) => a - b);
}
