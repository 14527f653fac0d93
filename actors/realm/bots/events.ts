import type { ApiEvent, Delivery } from '../../events.ts';
import type { PartialWithout, WireEventOf } from '../../wire/events.ts';
import type { RealmState } from '../state.ts';
import { isAdmin } from '../state.ts';
import type { BotChange } from './changes.ts';
import { asBot, botAdministrators, botView, servicesView } from './views.ts';

type PersonUpdate = PartialWithout<WireEventOf<'realm_user', 'update'>['person'], 'user_id'>;
type BotUpdate = PartialWithout<WireEventOf<'realm_bot', 'update'>['bot'], 'user_id'>;

const channelName = (state: RealmState, id: number | null) => (id === null ? null : (state.channels.get(id)?.name ?? null));

/** `realm_bot` events go to those who administer the bot; public facts about it as `realm_user` to everyone. */
export function botEvents(state: RealmState, change: BotChange): Delivery[] {
  const bot = asBot(state.users.get(change.userId));
  if (!bot) return [];
  const out: Delivery[] = [];
  const toRealm = (person: PersonUpdate) =>
    out.push({ realmId: state.realmId, audience: { kind: 'realm' }, event: { type: 'realm_user', op: 'update', person: { user_id: bot.userId, ...person } } });
  let administrators = botAdministrators(state, bot.bot);
  const toAdministrators = (fields: BotUpdate) => {
    if (administrators.length === 0) return;
    out.push({ realmId: state.realmId, audience: { kind: 'users', userIds: administrators }, event: { type: 'realm_bot', op: 'update', bot: { user_id: bot.userId, ...fields } } });
  };

  if (change.fullName !== undefined) {
    toRealm({ full_name: change.fullName });
    toAdministrators({ full_name: change.fullName });
  }
  if (change.ownerId !== undefined) {
    toRealm({ bot_owner_id: change.ownerId });
    // A previous owner who is not an administrator loses the bot; a new one who is not gains it whole.
    const previous = change.previousOwnerId == null ? undefined : state.users.get(change.previousOwnerId);
    if (previous && previous.isActive && !isAdmin(previous)) {
      out.push({ realmId: state.realmId, audience: { kind: 'users', userIds: [previous.userId] }, event: { type: 'realm_bot', op: 'delete', bot: { user_id: bot.userId } } satisfies WireEventOf<'realm_bot', 'delete'> });
    }
    const owner = state.users.get(change.ownerId);
    if (owner && !isAdmin(owner)) {
      out.push({ realmId: state.realmId, audience: { kind: 'users', userIds: [owner.userId] }, event: { type: 'realm_bot', op: 'add', bot: botView(state, bot) } });
      administrators = administrators.filter((id) => id !== owner.userId);
    }
    toAdministrators({ owner_id: change.ownerId });
    administrators = botAdministrators(state, bot.bot);
  }
  if (change.defaultSendingChannelId !== undefined) toAdministrators({ default_sending_stream: channelName(state, change.defaultSendingChannelId) });
  if (change.defaultEventsRegisterChannelId !== undefined) {
    toAdministrators({ default_events_register_stream: channelName(state, change.defaultEventsRegisterChannelId) });
  }
  if (change.defaultAllPublicStreams !== undefined) toAdministrators({ default_all_public_streams: change.defaultAllPublicStreams });
  if (change.services !== undefined) toAdministrators({ services: servicesView(bot.bot) });
  return out;
}

/** The `realm_bot` event of a bot's creation, deactivation, reactivation or new key, to those who administer it. */
export function botAccountEvent(state: RealmState, userId: number, op: 'add' | 'update', fields?: BotUpdate): Delivery[] {
  const bot = asBot(state.users.get(userId));
  if (!bot) return [];
  const userIds = botAdministrators(state, bot.bot);
  if (userIds.length === 0) return [];
  const event: ApiEvent = op === 'add' ? { type: 'realm_bot', op, bot: botView(state, bot) } : { type: 'realm_bot', op, bot: { user_id: userId, ...fields } };
  return [{ realmId: state.realmId, audience: { kind: 'users', userIds }, event }];
}
