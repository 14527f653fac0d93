import type { RealmState } from '../state.ts';
import type { ProfileFieldChange } from './changes.ts';
import { FieldType, valuesOf } from './state.ts';

export function applyProfileFieldChange(state: RealmState, change: ProfileFieldChange): void {
  const store = state.profileFields;
  switch (change.type) {
    case 'profile_field.created':
      store.fields.set(change.field.id, structuredClone(change.field));
      store.nextId = Math.max(store.nextId, change.field.id + 1);
      return;
    case 'profile_field.updated': {
      const field = structuredClone(change.field);
      store.fields.set(field.id, field);
      if (field.type !== FieldType.select) return;
      const options = field.fieldData ?? {};
      for (const values of store.values.values()) {
        const value = values.get(field.id);
        if (value && !Object.hasOwn(options, value.value)) values.delete(field.id);
      }
      return;
    }
    case 'profile_field.deleted':
      store.fields.delete(change.id);
      for (const values of store.values.values()) values.delete(change.id);
      return;
    case 'profile_fields.reordered':
      change.order.forEach((id, index) => {
        const field = store.fields.get(id);
        if (field) field.order = index;
      });
      return;
    case 'profile_data.changed': {
      const values = valuesOf(store, change.userId);
      for (const { id, value } of change.values) {
        if (value) values.set(id, { ...value });
        else values.delete(id);
      }
      return;
    }
  }
}
