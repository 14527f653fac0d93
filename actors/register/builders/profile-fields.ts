import { fieldsView, fieldTypesView } from '../../realm/profile-fields/views.ts';
import type { WireRegisterKeys } from '../../wire/events.ts';
import type { Builder } from '../builder.ts';

/** fetch type `custom_profile_fields`: the realm's fields in order, and the types a field may have. */
export const customProfileFieldsState: Builder = ({ realm, spectator }) => ({
  // Profiles are for the organization's members, not for spectators.
  custom_profile_fields: spectator ? [] : fieldsView(realm.profileFields),
  custom_profile_field_types: fieldTypesView(),
}) satisfies WireRegisterKeys<'custom_profile_fields' | 'custom_profile_field_types'>;
