import { settingValue } from '../../user/settings.ts';
import { draftsByTime } from '../../user/views.ts';
import type { WireRegisterKeys } from '../../wire/events.ts';
import type { Builder } from '../builder.ts';

// The original sends at most this many drafts at registration, the most recently edited first.
const MAX_DRAFTS_IN_REGISTER_RESPONSE = 1000;

/** fetch type `drafts`: empty while the user has drafts synchronization turned off. */
export const draftsState: Builder = ({ personal }) => ({
  drafts: settingValue(personal.settings, 'enable_drafts_synchronization') === true
    ? draftsByTime(personal, 'newest').slice(0, MAX_DRAFTS_IN_REGISTER_RESPONSE)
    : [],
}) satisfies WireRegisterKeys<'drafts'>;
