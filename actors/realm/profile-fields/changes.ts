import type { ProfileField, ProfileValue } from './state.ts';

export type ProfileFieldChange =
  | { type: 'profile_field.created'; field: ProfileField }
  /** a list field's values whose option is gone are dropped with it */
  | { type: 'profile_field.updated'; field: ProfileField }
  | { type: 'profile_field.deleted'; id: number }
  | { type: 'profile_fields.reordered'; order: number[] }
  /** null: the value was cleared */
  | { type: 'profile_data.changed'; userId: number; values: { id: number; value: ProfileValue | null }[] };
