import type { ApiEvent } from '../../events.ts';
import type { RealmState } from '../state.ts';
import type { ProfileFieldChange } from './changes.ts';
import { fieldsView } from './views.ts';
import type { WireEventOf } from '../../wire/events.ts';

type CustomProfileFieldValue = Extract<WireEventOf<'realm_user', 'update'>['person'], { custom_profile_field: unknown }>['custom_profile_field'];

/** Field changes send the whole list; a user's values go out one `realm_user` update per field. */
export function profileFieldEvents(state: RealmState, change: ProfileFieldChange): ApiEvent[] {
  if (change.type !== 'profile_data.changed') return [{ type: 'custom_profile_fields', fields: fieldsView(state.profileFields) }];
  return change.values.map(({ id, value }) => {
    const field: CustomProfileFieldValue = { id, value: value?.value ?? null };
    if (value?.renderedValue !== undefined) field.rendered_value = value.renderedValue;
    return { type: 'realm_user', op: 'update', person: { user_id: change.userId, custom_profile_field: field } } satisfies ApiEvent;
  });
}
