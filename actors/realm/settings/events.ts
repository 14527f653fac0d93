import type { ApiEvent } from '../../events.ts';
import type { WireEventOf } from '../../wire/events.ts';
import type { RealmSettingsChange } from './changes.ts';

/**
 * The message-editing settings and the group-setting permissions are announced as `update_dict`, the rest
 * as `update` (the original's split, kept for its clients).
 */
const ANNOUNCED_AS_DICT: ReadonlySet<string> = new Set([
  'allow_message_editing',
  'message_content_edit_limit_seconds',
  'move_messages_within_stream_limit_seconds',
  'move_messages_between_streams_limit_seconds',
]);

/** The `realm` events of a settings change, for everyone in the realm. */
export function realmSettingsEvents(change: RealmSettingsChange): ApiEvent[] {
  if (change.type === 'realm.permission_changed' || ANNOUNCED_AS_DICT.has(change.name)) {
    return [{ type: 'realm', op: 'update_dict', property: 'default', data: { [change.name]: change.value } }];
  }
  const events: ApiEvent[] = [{ type: 'realm', op: 'update', property: change.name, value: change.value } satisfies WireEventOf<'realm', 'update'>];
  // Clients from before topics_policy (feature level 392) know the setting as mandatory_topics.
  if (change.name === 'topics_policy') {
    events.push({ type: 'realm', op: 'update', property: 'mandatory_topics', value: change.value === 'disable_empty_topic' } satisfies WireEventOf<'realm', 'update'>);
  }
  // Clients from before the policy (feature level 358) know only whether any history is shown.
  if (change.name === 'message_edit_history_visibility_policy') {
    events.push({ type: 'realm', op: 'update', property: 'allow_edit_history', value: change.value !== 'none' } satisfies WireEventOf<'realm', 'update'>);
  }
  return events;
}
