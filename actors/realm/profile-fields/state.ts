/** The eight field types of the API, with the key and name registration lists them by. */
export const FIELD_TYPES = [
  { id: 1, key: 'SHORT_TEXT', name: 'Short text' },
  { id: 2, key: 'LONG_TEXT', name: 'Long text' },
  { id: 3, key: 'SELECT', name: 'List of options' },
  { id: 4, key: 'DATE', name: 'Date picker' },
  { id: 5, key: 'URL', name: 'Link' },
  { id: 6, key: 'USER', name: 'Person picker' },
  { id: 7, key: 'EXTERNAL_ACCOUNT', name: 'External account' },
  { id: 8, key: 'PRONOUNS', name: 'Pronouns' },
] as const;

export const FieldType = {
  shortText: 1,
  longText: 2,
  select: 3,
  date: 4,
  url: 5,
  user: 6,
  externalAccount: 7,
  pronouns: 8,
} as const;
export type FieldType = (typeof FieldType)[keyof typeof FieldType];

export interface ProfileField {
  id: number;
  name: string;
  hint: string;
  type: FieldType;
  /** options of a list field, or the subtype of an external account; null for the other types */
  fieldData: Record<string, unknown> | null;
  /** fields are listed in increasing order; a new field's order is its id */
  order: number;
  displayInProfileSummary: boolean;
  required: boolean;
  editableByUser: boolean;
}

/** A user's value for a field: text (a person picker's is the JSON text of its user ids). */
export interface ProfileValue {
  value: string;
  /** for the text types, which support Markdown */
  renderedValue?: string;
}

export interface ProfileFieldStore {
  fields: Map<number, ProfileField>;
  nextId: number;
  /** user -> field -> value */
  values: Map<number, Map<number, ProfileValue>>;
}

/** What a snapshot stores: fields as a list, values as [user, field, value]. */
export interface ProfileFieldStoreRecord {
  fields: ProfileField[];
  nextId: number;
  values: [number, number, ProfileValue][];
}

export const emptyProfileFieldStore = (): ProfileFieldStore => ({ fields: new Map(), nextId: 1, values: new Map() });

export function profileFieldStoreToRecord(store: ProfileFieldStore): ProfileFieldStoreRecord {
  const values: [number, number, ProfileValue][] = [];
  for (const [userId, byField] of store.values) for (const [fieldId, value] of byField) values.push([userId, fieldId, value]);
  return { fields: [...store.fields.values()], nextId: store.nextId, values };
}

export function profileFieldStoreFromRecord(record: ProfileFieldStoreRecord | undefined): ProfileFieldStore {
  const store = emptyProfileFieldStore();
  if (!record) return store;
  for (const field of record.fields) store.fields.set(field.id, field);
  store.nextId = record.nextId;
  for (const [userId, fieldId, value] of record.values) valuesOf(store, userId).set(fieldId, value);
  return store;
}

export function valuesOf(store: ProfileFieldStore, userId: number): Map<number, ProfileValue> {
  let values = store.values.get(userId);
  if (!values) store.values.set(userId, (values = new Map()));
  return values;
}

/** The fields in display order. */
export const orderedFields = (store: ProfileFieldStore) => [...store.fields.values()].sort((a, b) => a.order - b.order || a.id - b.id);

/** Markdown is rendered for the text types only. */
export const isRenderable = (type: FieldType) => type === FieldType.shortText || type === FieldType.longText;
