import type { ProfileField, ProfileFieldStore } from './state.ts';
import { FIELD_TYPES, orderedFields } from './state.ts';
import type { WireSchema } from '../../wire/events.ts';

/** A field as the API shows it: `field_data` as JSON text ('' for types without data). */
export function fieldView(field: ProfileField): WireSchema<'CustomProfileField'> {
  const view: WireSchema<'CustomProfileField'> = {
    id: field.id,
    name: field.name,
    type: field.type,
    hint: field.hint,
    field_data: field.fieldData === null ? '' : JSON.stringify(field.fieldData),
    order: field.order,
    required: field.required,
    editable_by_user: field.editableByUser,
  };
  // Only present when true, as in the original.
  if (field.displayInProfileSummary) view.display_in_profile_summary = true;
  return view;
}

export const fieldsView = (store: ProfileFieldStore) => orderedFields(store).map(fieldView);

export type ProfileData = Record<string, { value: string; rendered_value?: string }>;

/** A user's `profile_data`: field id -> value (and the rendered value of text fields). */
export function profileDataOf(store: ProfileFieldStore, userId: number): ProfileData {
  const data: ProfileData = {};
  for (const [fieldId, value] of store.values.get(userId) ?? []) {
    data[String(fieldId)] = value.renderedValue === undefined ? { value: value.value } : { value: value.value, rendered_value: value.renderedValue };
  }
  return data;
}

/** Registration's `custom_profile_field_types`: each type by its key. */
export const fieldTypesView = () => Object.fromEntries(FIELD_TYPES.map(({ id, key, name }) => [key, { id, name }]));
