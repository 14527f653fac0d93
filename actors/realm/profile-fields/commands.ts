import type { Caller } from '../commands.ts';

export interface ProfileFieldSpec {
  name: string;
  hint: string;
  fieldType: number;
  fieldData: unknown;
  displayInProfileSummary: boolean;
  required: boolean;
  editableByUser: boolean;
}

export type ProfileFieldCommand =
  | ({ type: 'profile_field.create'; caller: Caller } & ProfileFieldSpec)
  | ({ type: 'profile_field.update'; caller: Caller; id: number } & Partial<Omit<ProfileFieldSpec, 'fieldType'>>)
  | { type: 'profile_field.delete'; caller: Caller; id: number }
  /** every field's id, in the new order */
  | { type: 'profile_field.reorder'; caller: Caller; order: number[] }
  /** values as the request sent them (checked per field type by decide); `remove` clears values */
  | { type: 'profile_data.update'; caller: Caller; userId: number; set: { id: number; value: unknown }[]; remove: number[] };
