import { playgroundsView } from '../../realm/playgrounds/views.ts';
import type { WireRegisterKeys } from '../../wire/events.ts';
import type { Builder } from '../builder.ts';

/** fetch type `realm_playgrounds`: the realm's code playgrounds. */
export const realmPlaygroundsState: Builder = ({ realm }) => ({ realm_playgrounds: playgroundsView(realm.playgrounds) }) satisfies WireRegisterKeys<'realm_playgrounds'>;
