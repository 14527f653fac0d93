import { badRequest, notAdmin } from '../../errors.ts';
import { renderMarkdown } from '../../markdown.ts';
import type { Caller } from '../commands.ts';
import { requireRealmRoom } from '../limits.ts';
import { isAdmin, type RealmState, type UserProfile } from '../state.ts';
import type { ProfileFieldChange } from './changes.ts';
import type { ProfileFieldCommand } from './commands.ts';
import { checkFieldData, checkValue, DEFAULT_EXTERNAL_ACCOUNTS } from './validate.ts';
import { FIELD_TYPES, FieldType, isRenderable, type ProfileField, type ProfileValue } from './state.ts';

/** The original's limits. */
export const MAX_NAME_LENGTH = 40;
export const MAX_HINT_LENGTH = 80;
export const MAX_SUMMARY_FIELDS = 2;
/**
 * Not the original's (it has no limit): every registration carries every field, and each user may fill
 * each one in. Organizations use a handful.
 */
export const MAX_PROFILE_FIELDS = 100;

const notFound = (id: number) => badRequest(`Field id ${id} not found.`);

export function decideProfileField(state: RealmState, command: ProfileFieldCommand): ProfileFieldChange[] {
  switch (command.type) {
    case 'profile_field.create':
      requireAdmin(state, command.caller);
      requireRealmRoom('custom profile fields', state.profileFields.fields.size, MAX_PROFILE_FIELDS);
      return [{ type: 'profile_field.created', field: newField(state, command) }];
    case 'profile_field.update': {
      requireAdmin(state, command.caller);
      return [{ type: 'profile_field.updated', field: updatedField(state, command) }];
    }
    case 'profile_field.delete':
      requireAdmin(state, command.caller);
      if (!state.profileFields.fields.has(command.id)) throw notFound(command.id);
      return [{ type: 'profile_field.deleted', id: command.id }];
    case 'profile_field.reorder': {
      requireAdmin(state, command.caller);
      const fields = state.profileFields.fields;
      const order = new Set(command.order);
      if (order.size !== command.order.length || order.size !== fields.size || command.order.some((id) => !fields.has(id))) {
        throw badRequest('Invalid order mapping.');
      }
      return [{ type: 'profile_fields.reordered', order: [...command.order] }];
    }
    case 'profile_data.update':
      return decideProfileData(state, command);
  }
}

function newField(state: RealmState, command: Extract<ProfileFieldCommand, { type: 'profile_field.create' }>): ProfileField {
  const type = command.fieldType as FieldType;
  if (!FIELD_TYPES.some((entry) => entry.id === type)) throw badRequest('Invalid field type.');
  const fieldData = checkFieldData(type, command.fieldData ?? {});
  let { name, hint } = command;
  const preset = type === FieldType.externalAccount ? DEFAULT_EXTERNAL_ACCOUNTS[String(fieldData?.subtype)] : undefined;
  // A well-known external account brings its own label and help text.
  if (preset) ({ name, hint } = preset);
  else checkNameAndHint(name, hint);
  checkSummary(state, type, command.displayInProfileSummary, null);
  checkUniqueName(state, name, null);
  const id = state.profileFields.nextId;
  return {
    id, name: name.trim(), hint, type, fieldData, order: id,
    displayInProfileSummary: command.displayInProfileSummary, required: command.required, editableByUser: command.editableByUser,
  };
}

function updatedField(state: RealmState, command: Extract<ProfileFieldCommand, { type: 'profile_field.update' }>): ProfileField {
  const current = state.profileFields.fields.get(command.id);
  if (!current) throw notFound(command.id);
  const field = structuredClone(current);
  const preset = field.type === FieldType.externalAccount && DEFAULT_EXTERNAL_ACCOUNTS[String(field.fieldData?.subtype)];
  if (preset && (command.name || command.hint)) throw badRequest('Default custom field cannot be updated.');
  // Other types take no field data: a value sent for them is ignored, as by the original.
  if (command.fieldData !== undefined && (field.type === FieldType.select || field.type === FieldType.externalAccount)) {
    field.fieldData = checkFieldData(field.type, command.fieldData);
  }
  if (command.name !== undefined || command.hint !== undefined) {
    checkNameAndHint(command.name ?? field.name, command.hint ?? field.hint);
    if (command.name !== undefined) {
      checkUniqueName(state, command.name, field.id);
      field.name = command.name.trim();
    }
    if (command.hint !== undefined) field.hint = command.hint;
  }
  if (command.displayInProfileSummary !== undefined) {
    if (command.displayInProfileSummary && !field.displayInProfileSummary) checkSummary(state, field.type, true, field.id);
    field.displayInProfileSummary = command.displayInProfileSummary;
  }
  if (command.required !== undefined) field.required = command.required;
  if (command.editableByUser !== undefined) field.editableByUser = command.editableByUser;
  return field;
}

function checkNameAndHint(name: string, hint: string): void {
  if (!name.trim()) throw badRequest('Label cannot be blank.');
  if (hint.length > MAX_HINT_LENGTH) throw badRequest(`Help text cannot be longer than ${MAX_HINT_LENGTH} characters.`);
  if (name.length > MAX_NAME_LENGTH) throw badRequest(`Label cannot be longer than ${MAX_NAME_LENGTH} characters.`);
}

function checkUniqueName(state: RealmState, name: string, self: number | null): void {
  for (const field of state.profileFields.fields.values()) {
    if (field.id !== self && field.name === name.trim()) throw badRequest('A field with that label already exists.');
  }
}

/** At most two fields in the summary, and never long text or a person picker (which clients cannot show there). */
function checkSummary(state: RealmState, type: FieldType, shown: boolean, self: number | null): void {
  if (!shown) return;
  const others = [...state.profileFields.fields.values()].filter((field) => field.displayInProfileSummary && field.id !== self).length;
  if (others >= MAX_SUMMARY_FIELDS) throw badRequest(`Only ${MAX_SUMMARY_FIELDS} custom profile fields can be displayed in the profile summary.`);
  if (type === FieldType.longText || type === FieldType.user) throw badRequest('Field type not supported for display in profile summary.');
}

/**
 * A user's own values (fields an administrator made not editable by users are refused to non-administrators),
 * or an administrator's edit of anyone's. Values equal to the stored ones change nothing.
 */
function decideProfileData(state: RealmState, command: Extract<ProfileFieldCommand, { type: 'profile_data.update' }>): ProfileFieldChange[] {
  const actor = command.caller.kind === 'user' ? state.users.get(command.caller.userId) : undefined;
  const admin = command.caller.kind === 'operator' || (!!actor && isAdmin(actor));
  if (command.caller.kind === 'user' && command.caller.userId !== command.userId && !admin) throw notAdmin();
  const target = state.users.get(command.userId);
  if (!target) throw badRequest('No such user');
  if (target.isBot) throw badRequest('Bots cannot have custom profile fields');
  const current = state.profileFields.values.get(target.userId);
  const field = (id: number) => {
    const found = state.profileFields.fields.get(id);
    if (!found) throw notFound(id);
    if (!admin && !found.editableByUser) throw badRequest('You are not allowed to change this field. Contact an administrator to update it.');
    return found;
  };
  const changed = new Map<number, ProfileValue | null>();
  for (const id of command.remove) {
    field(id);
    if (current?.has(id)) changed.set(id, null);
  }
  for (const { id, value } of command.set) {
    const text = checkValue(state, field(id), value);
    const next: ProfileValue = isRenderable(field(id).type) ? { value: text, renderedValue: renderMarkdown(text) } : { value: text };
    if (current?.get(id)?.value === text) changed.delete(id);
    else changed.set(id, next);
  }
  if (changed.size === 0) return [];
  return [{ type: 'profile_data.changed', userId: target.userId, values: [...changed].map(([id, value]) => ({ id, value })) }];
}

function requireAdmin(state: RealmState, caller: Caller): UserProfile | null {
  if (caller.kind === 'operator') return null;
  const user = state.users.get(caller.userId);
  if (!user || !isAdmin(user)) throw notAdmin();
  return user;
}
