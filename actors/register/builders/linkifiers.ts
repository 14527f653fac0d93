import { acceptsLinkifiers } from '../../queue/capabilities.ts';
import { linkifiersView } from '../../realm/linkifiers/views.ts';
import type { WireRegisterKeys } from '../../wire/events.ts';
import type { Builder } from '../builder.ts';

/** fetch type `realm_linkifiers`: the realm's linkifiers in order, for clients that read URL templates. */
export const realmLinkifiersState: Builder = ({ realm }, { capabilities }) => ({
  realm_linkifiers: acceptsLinkifiers(capabilities) ? linkifiersView(realm.linkifiers) : [],
});

/** fetch type `realm_filters`: the legacy form, always empty since feature level 176. */
export const realmFiltersState: Builder = () => ({ realm_filters: [] }) satisfies WireRegisterKeys<'realm_filters'>;
